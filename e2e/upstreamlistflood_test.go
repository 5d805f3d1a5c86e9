package e2e

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
)

// floodSize is how many tools/list_changed (and as many
// prompts/list_changed) the hostile upstream sends at once.
const floodSize = 2000

// maxListings bounds the listings a flood may cost: one under way and one
// after, a few times over for a restart or the tool the upstream adds.
const maxListings = 10

// listCounts are the hostile upstream's counts since its flood began
// (--count-lists).
type listCounts struct {
	Sent        int `json:"sent"`
	ToolsList   int `json:"tools_list"`
	PromptsList int `json:"prompts_list"`
}

func readListCounts(t *testing.T, file string) listCounts {
	t.Helper()
	var c listCounts
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return c
	}
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &c))
	return c
}

// TestUpstreamListChangedFlood: an upstream that sends 2,000
// notifications/tools/list_changed and 2,000 prompts/list_changed in one
// burst costs a few listings, not one per notification: toolwarden lists
// one at a time and folds the notifications that come meanwhile into one
// more. It stays responsive (calls after the flood are answered), it
// still applies the change the upstream made (status, added just before,
// is offered and runs), and its client is told a few times, not once per
// notification.
func TestUpstreamListChangedFlood(t *testing.T) {
	t.Parallel()
	bin := buildHostile(t)
	ws, env := workspace(t)
	dir := filepath.Dir(ws)
	env = append(env, "XDG_STATE_HOME="+filepath.Join(dir, "state"))
	counts := filepath.Join(dir, "lists.json")
	file := upstreamConfig(t, ws, `
policy:
  allow: ["hostile__*"]
upstream_pins: warn
upstreams:
  - name: hostile
    command: [`+bin+`, --prompts, --add-status-after=1, --flood-list-changed=`+strconv.Itoa(floodSize)+`, --count-lists, `+counts+`]
    sandbox: false
`)
	var toolsTold, promptsTold atomic.Int32
	c := listeningClient(t, ws, env, file, func(n mcp.JSONRPCNotification) {
		countMethod(mcp.MethodNotificationToolsListChanged, &toolsTold)(n)
		countMethod(mcp.MethodNotificationPromptsListChanged, &promptsTold)(n)
	})

	res := callUpstream(t, c, "hostile__notes", nil) // the upstream then adds status and floods
	require.False(t, res.IsError, "%+v", res.Content)
	waitFor(t, "the flood sent", func() bool { return readListCounts(t, counts).Sent == floodSize })
	waitFor(t, "status offered", func() bool { return slices.Contains(listedNames(t, c), "hostile__status") })
	res = callUpstream(t, c, "hostile__status", nil)
	require.False(t, res.IsError, "%+v", res.Content)
	require.Equal(t, "status: up", text(t, res))

	// Settled: the counts stayed the same over quietPolls polls in a
	// row, each after a call through to the upstream and back. They only
	// grow, so the bound is checked on the last; a slow machine only
	// makes the wait longer.
	const quietPolls = 5
	got, quiet := readListCounts(t, counts), 0
	waitFor(t, "the listings to settle", func() bool {
		res := callUpstream(t, c, "hostile__notes", nil)
		require.False(t, res.IsError, "%+v", res.Content)
		now := readListCounts(t, counts)
		if now != got {
			got, quiet = now, 0
			return false
		}
		quiet++
		return quiet == quietPolls
	})
	t.Logf("after %d of each list_changed: %d tools/list, %d prompts/list; the client was told %d and %d times",
		floodSize, got.ToolsList, got.PromptsList, toolsTold.Load(), promptsTold.Load())
	require.NotZero(t, got.ToolsList, "the flood was acted on")
	require.NotZero(t, got.PromptsList, "the flood was acted on")
	require.LessOrEqual(t, got.ToolsList, maxListings, "tools/list requests for %d notifications", floodSize)
	require.LessOrEqual(t, got.PromptsList, maxListings, "prompts/list requests for %d notifications", floodSize)
	require.NotZero(t, toolsTold.Load(), "the client is told of the tool added")
	require.LessOrEqual(t, toolsTold.Load(), int32(maxListings), "tools/list_changed sent to the client")
	require.LessOrEqual(t, promptsTold.Load(), int32(maxListings), "prompts/list_changed sent to the client")
}
