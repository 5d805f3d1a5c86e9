package e2e

import (
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// listedTool is the tool name as c is offered it now, nil when it is not.
func listedTool(t *testing.T, c *client.Client, name string) *mcp.Tool {
	t.Helper()
	list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	for _, tool := range list.Tools {
		if tool.Name == name {
			return &tool
		}
	}
	return nil
}

func readOnlyHint(tool *mcp.Tool) bool {
	h := tool.Annotations.ReadOnlyHint
	return h != nil && *h
}

// TestUpstreamLaterToolLosesDefaultGrant: a tool the upstream adds after
// start (status, annotated read-only, with tools/list_changed) gets the
// default grant of its capability, as it would have at start, and runs
// unasked; when the upstream lists it again without the annotation, that
// default is withdrawn: the next call is refused for the capability
// (denied.capability, capabilities.missing), not as drift (under warn the
// change runs, logged) and not for a missing approval, which a tool that
// kept its grant would meet next. The audit says so.
func TestUpstreamLaterToolLosesDefaultGrant(t *testing.T) {
	t.Parallel()
	bin := buildHostile(t)
	ws, env := workspace(t)
	env = append(env, "XDG_STATE_HOME="+filepath.Join(filepath.Dir(ws), "state"))
	file := upstreamConfig(t, ws, `
policy:
  allow: ["hostile__*"]
upstream_pins: warn
upstreams:
  - name: hostile
    command: [`+bin+`, --add-status-after=1, --unmark-status-after=2]
    sandbox: false
`)
	var notified atomic.Int32
	c := listeningClient(t, ws, env, file, countListChanged(&notified))
	require.Nil(t, listedTool(t, c, "hostile__status"), "status is not listed at start")

	res := callUpstream(t, c, "hostile__notes", nil) // the upstream then adds status
	require.False(t, res.IsError, "%+v", res.Content)
	waitFor(t, "status offered after tools/list_changed", func() bool {
		tool := listedTool(t, c, "hostile__status")
		return tool != nil && readOnlyHint(tool)
	})
	require.NotZero(t, notified.Load(), "the client was told")
	told := notified.Load()
	res = callUpstream(t, c, "hostile__status", nil) // the upstream then takes readOnlyHint back
	require.False(t, res.IsError, "a read-only tool added after start runs by default: %+v", res.Content)
	require.Equal(t, "status: up", text(t, res))

	waitFor(t, "status listed again without readOnlyHint", func() bool {
		tool := listedTool(t, c, "hostile__status")
		return tool != nil && !readOnlyHint(tool)
	})
	waitFor(t, "tools/list_changed for the change", func() bool { return notified.Load() > told })
	res = callUpstream(t, c, "hostile__status", nil)
	deniedWith(t, res, toolerr.DeniedCapability)
	e, _ := toolerr.FromResult(res)
	require.Equal(t, "capabilities.missing", e.Rule)
	require.Contains(t, e.Message, "mcp:call:hostile/status")

	var status []string
	for _, e := range audittest.Entries(t, auditPathOf(t, env)) {
		if e.Tool != "hostile__status" {
			continue
		}
		status = append(status, string(e.Outcome)+" "+e.Rule+" "+e.Code)
	}
	// The upstream changes status as its answer goes out: the second
	// drift line may come before or after that call's completed line.
	require.ElementsMatch(t, []string{
		"drift upstream_pins.warn ", // added: logged, offered
		"allowed allowed ",
		"completed allowed ",
		"drift upstream_pins.warn ", // readOnlyHint gone: logged, offered
		"denied capabilities.missing denied.capability",
	}, status, "the refusal is the capability's, not drift's")
	require.Equal(t, "denied capabilities.missing denied.capability", status[len(status)-1])
}
