package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// tsSDKVersion is the @modelcontextprotocol/sdk version
// scripts/clients/setup-ts-sdk pins.
const tsSDKVersion = "1.32.2"

// tsSummary is what scripts/clients/tsclient/check.cjs prints.
type tsSummary struct {
	Transport   string `json:"transport"`
	SDK         string `json:"sdk"`
	Tools       int    `json:"tools"`
	Schemas     int    `json:"schemas"`
	Successes   int    `json:"successes"`
	Validated   int    `json:"validated"`
	Elicitation struct {
		Asked int
		Code  string
	} `json:"elicitation"`
	Errors []struct {
		Tool, Code, Rule string
		Hint             bool
	} `json:"errors"`
	RunScript *struct {
		Ran      bool
		ExitCode int `json:"exitCode"`
		Progress int
	} `json:"runScript"`
	Failures []string `json:"failures"`
}

// needNode returns the node binary, or stops the test (a failure under
// scripts/test).
func needNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "node is not installed (Node >= 20 is needed for the npm clients)")
	}
	return node
}

// TestTypeScriptSDKClient drives the built binary with the official
// TypeScript SDK over stdio, streamable HTTP and SSE
// (scripts/clients/tsclient/check.cjs says what it checks: schemas
// compile with ajv, successes validate against their output schema,
// errors pass the SDK with code and hint, elicitation approves a write).
func TestTypeScriptSDKClient(t *testing.T) {
	prefix := testenv.Need(t, "TOOLWARDEN_TEST_TS_SDK")[0] // scripts/test sets it up
	node := needNode(t)
	script, err := filepath.Abs("../scripts/clients/tsclient/check.cjs")
	require.NoError(t, err)
	ws, env := workspace(t)
	base, serverLog := startHTTPLogged(t, ws, env)
	// Over stdio, run_script too, as root (sandboxes need it here), with
	// the runsc scripts/sandbox-setup installs.
	sandboxed := os.Geteuid() == 0
	if sandboxed {
		env = append(env, "TOOLWARDEN_TS_SERVE_ARGS="+strings.Join(runScriptArgs, " "),
			"TOOLWARDEN_EXEC_BACKEND=runsc", "TOOLWARDEN_EXEC_RUNSC_PATH="+currentRunsc(t))
	}
	const token = "e2e-token-0123456789"
	// elicits: whether toolwarden can ask the client over the transport;
	// over legacy SSE it cannot, and the write is refused with a code.
	transports := []struct {
		name, a1, a2 string
		elicits      bool
	}{
		{"stdio", binary, ws, true},
		{"streamable-http", base + "/mcp", token, true},
		{"sse", base + "/sse", token, false},
	}
	var passed []string
	var last tsSummary
	progress := 0
	var stdioRevisions []string
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			cmd := exec.CommandContext(ctxT(t), node, script, prefix, tr.name, tr.a1, tr.a2)
			cmd.Env = env
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			runErr := cmd.Run()
			lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			var sum tsSummary
			require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &sum), "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
			require.Empty(t, sum.Failures)
			require.NoError(t, runErr, stderr.String())
			assert.Equal(t, tsSDKVersion, sum.SDK)
			wantTools := len(servedTools)
			if sandboxed && tr.name == "stdio" {
				wantTools++
				require.NotNil(t, sum.RunScript, "run_script listed")
				assert.True(t, sum.RunScript.Ran)
				assert.Positive(t, sum.RunScript.Progress, "progress notifications of a 5 s run reached the SDK's onprogress")
				progress = sum.RunScript.Progress
			}
			if tr.name == "stdio" {
				// The script passes the server's log on (stderr: 'inherit').
				stdioRevisions = negotiatedIn(stderr.String())
			}
			assert.Equal(t, wantTools, sum.Tools)
			assert.Equal(t, 2*wantTools, sum.Schemas, "an input and an output schema per tool, all compiled")
			assert.Positive(t, sum.Validated)
			assert.Equal(t, sum.Successes, sum.Validated, "every success had structured content matching its output schema")
			if tr.elicits {
				assert.Equal(t, 1, sum.Elicitation.Asked, "write_file asked once")
				assert.Empty(t, sum.Elicitation.Code, "then ran")
			} else {
				assert.Zero(t, sum.Elicitation.Asked)
				assert.Equal(t, "denied.approval_unavailable", sum.Elicitation.Code)
			}
			codes := map[string]bool{}
			for _, e := range sum.Errors {
				assert.True(t, e.Hint, "%s %s has a hint", e.Tool, e.Code)
				codes[e.Code] = true
			}
			for _, c := range []string{"denied.approval_unavailable", "invalid_argument.path_outside_workspace", "invalid_argument.schema", "not_found"} {
				assert.True(t, codes[c], "an error result with %s passed the SDK", c)
			}
			if !t.Failed() {
				passed = append(passed, tr.name)
				last = sum
			}
		})
	}
	if len(passed) != len(transports) {
		return
	}
	client := "TypeScript SDK (`@modelcontextprotocol/sdk`)"
	observe(t, client, tsSDKVersion, "tools", fmt.Sprintf("✓ %d listed, %d schemas compile (ajv 2020-12, strict)", last.Tools, last.Schemas))
	observe(t, client, tsSDKVersion, "structured output", fmt.Sprintf("✓ %d/%d successes validate", last.Validated, last.Successes))
	observe(t, client, tsSDKVersion, "errors", fmt.Sprintf("✓ %d error results pass the SDK, code+hint in text and `_meta`", len(last.Errors)))
	observe(t, client, tsSDKVersion, "elicitation", "✓ stdio, streamable HTTP: asked once, accepted, write ran; SSE: `denied.approval_unavailable` (toolwarden cannot ask over SSE)")
	if progress > 0 {
		observe(t, client, tsSDKVersion, "run_script", "✓ bash in the runsc sandbox (stdio), result validates against the output schema")
		observe(t, client, tsSDKVersion, "progress", "✓ run_script (5 s, stdio): its notifications reach `onprogress`")
	}
	observe(t, client, tsSDKVersion, "HTTP", "✓ streamable HTTP and SSE, bearer token")
	observeProtocol(t, client, tsSDKVersion, "stdio", stdioRevisions)
	observeProtocol(t, client, tsSDKVersion, "HTTP", negotiatedIn(serverLog.String()))
}
