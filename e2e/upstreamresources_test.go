package e2e

import (
	"encoding/base64"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// fakeAWSKey is the credential-shaped string of testdata/hostileupstream.
const fakeAWSKey = "AKIAZ7Q2VNKW4HXJ5LMT"

func promptNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	list, err := c.ListPrompts(ctxT(t), mcp.ListPromptsRequest{})
	require.NoError(t, err)
	var names []string
	for _, p := range list.Prompts {
		names = append(names, p.Name)
	}
	return names
}

func getPrompt(t *testing.T, c *client.Client, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	t.Helper()
	req := mcp.GetPromptRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	return c.GetPrompt(ctxT(t), req)
}

func readResource(t *testing.T, c *client.Client, uri string) (*mcp.ReadResourceResult, error) {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	return c.ReadResource(ctxT(t), req)
}

// TestUpstreamEverythingPromptsResources: the reference server
// "everything" (npm, pinned) behind the built binary offers, namespaced,
// only the prompts and resources the policy names: a prompt is got with
// its argument, a denied one is hidden and refused (audited), resources
// and templates are listed under upstream://everything/, a text and a
// blob resource are read through the guard and audited.
func TestUpstreamEverythingPromptsResources(t *testing.T) {
	bin := testenv.Need(t, "TOOLWARDEN_TEST_SERVER_EVERYTHING")[0]
	t.Parallel()
	ws, env := workspace(t)
	file := upstreamConfig(t, ws, `
policy:
  allow: [everything__echo, everything__args-prompt, everything__resources]
upstreams:
  - name: everything
    command: [`+bin+`, stdio]
    sandbox: false
`)
	c, _ := serveUpstream(t, ws, env, file)
	require.Equal(t, []string{"everything__args-prompt"}, promptNames(t, c))

	res, err := getPrompt(t, c, "everything__args-prompt", map[string]string{"city": "Paris"})
	require.NoError(t, err)
	require.Len(t, res.Messages, 1)
	require.Contains(t, res.Messages[0].Content.(mcp.TextContent).Text, "What's weather in Paris?")
	_, err = getPrompt(t, c, "everything__simple-prompt", nil)
	require.ErrorContains(t, err, "denied.not_allowed")
	_, err = getPrompt(t, c, "everything__args-prompt", map[string]string{"town": "Paris"})
	require.ErrorContains(t, err, "invalid_argument.schema", "the upstream's arguments are checked before it sees them")

	list, err := c.ListResources(ctxT(t), mcp.ListResourcesRequest{})
	require.NoError(t, err)
	require.NotEmpty(t, list.Resources)
	for _, r := range list.Resources {
		require.True(t, strings.HasPrefix(r.URI, "upstream://everything/"), r.URI)
	}
	tmpl, err := c.ListResourceTemplates(ctxT(t), mcp.ListResourceTemplatesRequest{})
	require.NoError(t, err)
	var raws []string
	for _, tt := range tmpl.ResourceTemplates {
		raws = append(raws, tt.URITemplate.Raw())
	}
	require.Contains(t, raws, "upstream://everything/demo://resource/dynamic/text/{resourceId}")

	text, err := readResource(t, c, "upstream://everything/demo://resource/dynamic/text/1")
	require.NoError(t, err)
	require.Len(t, text.Contents, 1)
	tc := text.Contents[0].(mcp.TextResourceContents)
	require.Equal(t, "upstream://everything/demo://resource/dynamic/text/1", tc.URI)
	require.NotEmpty(t, tc.Text)
	blob, err := readResource(t, c, "upstream://everything/demo://resource/dynamic/blob/1")
	require.NoError(t, err)
	require.NotEmpty(t, blob.Contents[0].(mcp.BlobResourceContents).Blob)
	_, err = readResource(t, c, "upstream://other/demo://resource/dynamic/text/1")
	require.Error(t, err)

	var got []string
	for _, e := range audittest.Entries(t, auditPathOf(t, env)) {
		if e.Outcome != guard.OutcomeStarted {
			got = append(got, e.Tool+" "+string(e.Outcome)+" "+e.Rule)
		}
	}
	require.Subset(t, got, []string{
		"everything__args-prompt completed allowed",
		"everything__simple-prompt denied default:not_allowlisted",
		"everything__args-prompt denied args.schema",
	})
	var reads int
	for _, e := range audittest.Entries(t, auditPathOf(t, env)) {
		if e.Tool == "everything__resources" && e.Outcome == guard.OutcomeCompleted {
			reads++
		}
	}
	require.GreaterOrEqual(t, reads, 4, "two listings and two reads, each audited")
}

// TestUpstreamHostilePrompts: a compromised upstream's poisoned prompt is
// withheld (config check says why); its clean prompt's text and its
// resources, text and blob, reach the client with the credential redacted
// and the instruction flagged.
func TestUpstreamHostilePrompts(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	bin := filepath.Join(t.TempDir(), "hostileupstream")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/hostileupstream").CombinedOutput()
	require.NoError(t, err, "%s", out)
	file := upstreamConfig(t, ws, `
policy:
  allow: ["hostile__*"]
  taint: "off"
upstreams:
  - name: hostile
    command: [`+bin+`, --prompts]
    sandbox: false
`)
	c, _ := serveUpstream(t, ws, env, file)
	require.Equal(t, []string{"hostile__brief"}, promptNames(t, c), "setup's poisoned description is withheld")
	_, err = getPrompt(t, c, "hostile__setup", nil)
	require.Error(t, err)

	res, err := getPrompt(t, c, "hostile__brief", map[string]string{"topic": "q3"})
	require.NoError(t, err)
	var all []string
	for _, m := range res.Messages {
		all = append(all, m.Content.(mcp.TextContent).Text)
	}
	joined := strings.Join(all, "\n")
	require.Contains(t, joined, "Brief on q3")
	require.NotContains(t, joined, fakeAWSKey)
	require.Len(t, res.Messages, 2, "the instruction is flagged in a message of its own")

	cfg, err := readResource(t, c, "upstream://hostile/hostile://config")
	require.NoError(t, err)
	require.NotContains(t, cfg.Contents[0].(mcp.TextResourceContents).Text, fakeAWSKey)
	dump, err := readResource(t, c, "upstream://hostile/hostile://dump")
	require.NoError(t, err)
	raw, err := base64.StdEncoding.DecodeString(dump.Contents[0].(mcp.BlobResourceContents).Blob)
	require.NoError(t, err)
	require.NotContains(t, string(raw), fakeAWSKey)

	check, _ := exec.Command(binary, "config", "check", "--workspace", ws, "--config", file).CombinedOutput()
	require.Contains(t, string(check), "upstream:hostile prompt setup", "%s", check)
}

// TestUpstreamHostilePromptRugPull: the hostile upstream poisons its
// prompt after the first get and says its prompts changed; toolwarden
// lists them again, tells the client, hides the prompt and refuses its
// next get with denied.tool_drift, and audits the drift.
func TestUpstreamHostilePromptRugPull(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	bin := filepath.Join(t.TempDir(), "hostileupstream")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/hostileupstream").CombinedOutput()
	require.NoError(t, err, "%s", out)
	file := upstreamConfig(t, ws, `
policy:
  allow: ["hostile__brief"]
  taint: "off"
upstreams:
  - name: hostile
    command: [`+bin+`, --prompts, --prompt-rug-pull]
    sandbox: false
`)
	c, err := client.NewStdioMCPClient(binary, env, "serve", "--workspace", ws, "--config", file)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.Start(ctxT(t)))
	got := make(chan string, 16)
	c.OnNotification(func(n mcp.JSONRPCNotification) { got <- n.Method })
	// A client of the stateful protocol receives notifications unasked
	// (2026-07-28 clients subscribe with subscriptions/listen).
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "e2e", Version: "1"}
	_, err = c.Initialize(ctxT(t), init)
	require.NoError(t, err)
	_, err = getPrompt(t, c, "hostile__brief", map[string]string{"topic": "q3"})
	require.NoError(t, err)

	deadline := time.After(time.Minute)
	for told := false; !told; {
		select {
		case m := <-got:
			told = m == string(mcp.MethodNotificationPromptsListChanged)
		case <-deadline:
			t.Fatal("the client was not told within a minute that the prompts changed")
		}
	}
	require.Empty(t, promptNames(t, c), "the changed prompt is hidden")
	_, err = getPrompt(t, c, "hostile__brief", map[string]string{"topic": "q3"})
	require.ErrorContains(t, err, "denied.tool_drift")

	var lines []string
	for _, e := range audittest.Entries(t, auditPathOf(t, env)) {
		if e.Tool == "hostile__brief" {
			lines = append(lines, string(e.Outcome)+" "+e.Rule+" "+e.Code)
		}
	}
	// The upstream sends list_changed while it answers the first get, so
	// the drift line may come before or after that get's end: only the
	// first and the last line have a fixed place.
	require.ElementsMatch(t, []string{
		"allowed allowed ",
		"completed allowed ",
		"drift upstream_pins.trust_on_first_use denied.tool_drift",
		"denied upstream_pins.trust_on_first_use denied.tool_drift",
	}, lines)
	require.Equal(t, "allowed allowed ", lines[0])
	require.Equal(t, "denied upstream_pins.trust_on_first_use denied.tool_drift", lines[len(lines)-1])
}
