package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/guard"
	fake "github.com/toolwarden/toolwarden/internal/llmfake/gemini"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// These tests drive the real Gemini CLI (npm @google/gemini-cli, installed
// by scripts/clients/setup-gemini-cli, path in TOOLWARDEN_TEST_GEMINI_CLI)
// headless (-p) with the built toolwarden as its stdio MCP server and the
// scripted fake as its Gemini API. They pin down what a headless run needs
// to see toolwarden's tools at all (docs/clients.md says it to users) and
// record the exact tools/call arguments the CLI sends.

// geminiCLIVersion is the version scripts/clients/setup-gemini-cli pins;
// the observations below and docs/clients.md are of this version.
const geminiCLIVersion = "0.61.0"

// updateGeminiCLI rewrites the recorded call arguments in testdata.
var updateGeminiCLI = flag.Bool("update-gemini-cli", false, "rewrite testdata/gemini-cli-calls.json from a run")

// servedTools is every tool `serve` lists with the embedded defaults here.
var servedTools = []string{"create_directory", "delete_file", "directory_tree", "edit_file", "file_info", "grep_files",
	"list_directory", "move_file", "read_file", "read_multiple_files", "search_files", "write_file"}

// cliRun is one headless Gemini CLI run.
type cliRun struct {
	// trust is the "trust" of toolwarden's mcpServers entry; server adds
	// other keys to it, settings keys to the project settings.
	trust    bool
	server   map[string]any
	settings map[string]any
	// skipTrust trusts the folder with --skip-trust instead of
	// GEMINI_CLI_TRUST_WORKSPACE=true.
	skipTrust bool
	// policy, when set, is a policy file passed with --policy.
	policy string
	args   []string
	// serve is what toolwarden offers; decisions, when set, are the
	// terminal approver's answers to the calls that wait (serve.approvals).
	serve     serveOpts
	decisions []decision
	// http, when set, is a toolwarden served over streamable HTTP at this
	// base URL, reached with httpUrl and a bearer token header, instead of
	// one the CLI starts.
	http string
	// ws and env, when set, are the run's workspace and environment
	// (artifactEnv's, for resources), instead of new ones.
	ws  string
	env []string
}

// cliResult is what a run left behind.
type cliResult struct {
	ws, output string
	fake       *fake.Server
	// rpc is every JSON-RPC message the CLI wrote to toolwarden's stdin,
	// answered every one toolwarden wrote back.
	rpc, answered []map[string]any
	approver      approverResult
}

// run writes the settings, starts the fake with turns and runs the CLI
// in the workspace; the run must succeed.
func (r cliRun) run(t *testing.T, turns ...fake.Turn) cliResult {
	t.Helper()
	cli := testenv.Need(t, "TOOLWARDEN_TEST_GEMINI_CLI")[0] // scripts/test sets it up
	ws, env := r.ws, withoutGeminiEndpoint(r.env)
	if ws == "" {
		ws, env = geminiWorkspace(t)
	}
	parent := filepath.Dir(ws)
	f := fake.New(turns...)
	t.Cleanup(f.Close)

	// toolwarden runs behind a tee, to record what the CLI sends it.
	tw := newStdioServer(t, ws, env, r.serve)
	server := map[string]any{"command": tw.command, "args": tw.args, "trust": r.trust}
	if r.http != "" {
		server = map[string]any{"httpUrl": r.http + "/mcp", "headers": map[string]string{"Authorization": "Bearer " + httpToken}, "trust": r.trust}
	}
	for k, v := range r.server {
		server[k] = v
	}
	project := map[string]any{"mcpServers": map[string]any{"toolwarden": server}}
	for k, v := range r.settings {
		project[k] = v
	}
	writeSettings(t, filepath.Join(ws, ".gemini", "settings.json"), project)
	// The user settings (HOME is parent) pick the API-key auth, which
	// GOOGLE_GEMINI_BASE_URL alone does not, and keep usage statistics
	// from trying to reach Google.
	writeSettings(t, filepath.Join(parent, ".gemini", "settings.json"), map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
	})

	args := append([]string{"-m", "gemini-2.5-flash", "-o", "json"}, r.args...)
	env = append(env, "GEMINI_API_KEY=dummy", "GOOGLE_GEMINI_BASE_URL="+f.URL, "NO_COLOR=1")
	if r.policy != "" {
		path := filepath.Join(t.TempDir(), "policy.toml")
		require.NoError(t, os.WriteFile(path, []byte(r.policy), 0o644))
		args = append(args, "--policy", path)
	}
	if r.skipTrust {
		args = append(args, "--skip-trust")
	} else {
		env = append(env, "GEMINI_CLI_TRUST_WORKSPACE=true")
	}
	ctx := ctxCLI(t)
	stop := startApprover(ctx, tw, r.decisions...)
	cmd := exec.CommandContext(ctx, cli, append(args, "-p", "Read hello.txt.")...)
	cmd.Dir, cmd.Env = ws, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	approver := stop()
	require.NoError(t, err, "gemini %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), stdout.String(), stderr.String())
	assert.Empty(t, f.Problems())
	sent, answered := tw.rpc(t)
	return cliResult{ws: ws, output: stdout.String(), fake: f, rpc: sent, answered: answered, approver: approver}
}

func writeSettings(t *testing.T, path string, v any) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	data, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// readRPC reads the recorded JSON-RPC messages; none when toolwarden was
// never started.
func readRPC(t *testing.T, path string) []map[string]any {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var msgs []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		msgs = append(msgs, m)
	}
	return msgs
}

// calls returns the params of each tools/call the CLI sent.
func (r cliResult) calls() []map[string]any {
	var out []map[string]any
	for _, m := range r.rpc {
		if m["method"] == "tools/call" {
			p, _ := m["params"].(map[string]any)
			out = append(out, p)
		}
	}
	return out
}

// listed reports whether the CLI asked toolwarden for its tools.
func (r cliResult) listed() bool {
	for _, m := range r.rpc {
		if m["method"] == "tools/list" {
			return true
		}
	}
	return false
}

// mainRequests are the requests of the main loop (streamGenerateContent).
func mainRequests(f *fake.Server) []fake.Request {
	var out []fake.Request
	for _, r := range f.Requests() {
		if strings.HasSuffix(r.Path, ":streamGenerateContent") {
			out = append(out, r)
		}
	}
	return out
}

// declarations returns the function declarations of a request by name.
func declarations(r fake.Request) map[string]map[string]any {
	out := map[string]map[string]any{}
	tools, _ := r.Body["tools"].([]any)
	for _, tl := range tools {
		decls, _ := tl.(map[string]any)["functionDeclarations"].([]any)
		for _, d := range decls {
			dm, _ := d.(map[string]any)
			name, _ := dm["name"].(string)
			out[name] = dm
		}
	}
	return out
}

// toolwardenDeclared lists, sorted and without the mcp_toolwarden_ prefix,
// the toolwarden tools the first main request declared to the model.
func toolwardenDeclared(t *testing.T, f *fake.Server) []string {
	t.Helper()
	reqs := mainRequests(f)
	require.NotEmpty(t, reqs, "the CLI asked the model nothing")
	var names []string
	for name := range declarations(reqs[0]) {
		if n, ok := strings.CutPrefix(name, "mcp_toolwarden_"); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// answerDone ends every model turn with a text.
var answerDone = fake.Turn{Parts: []map[string]any{fake.Text("done")}, Repeat: true}

// allowToolwarden is a Gemini CLI policy rule that lets every toolwarden
// tool run without a confirmation (toolwarden still applies its own
// policy and approvals).
const allowToolwarden = `[[rule]]
mcpName = "toolwarden"
toolName = "*"
decision = "allow"
priority = 200
`

// TestGeminiCLIHeadlessNeeds records which toolwarden tools a headless
// `gemini -p` run declares to the model under each setting; docs/clients.md
// is written from it.
func TestGeminiCLIHeadlessNeeds(t *testing.T) {
	withoutWrite := servedTools[:len(servedTools)-1]
	for _, tc := range []struct {
		name string
		run  cliRun
		want []string
	}{
		// The old README snippet: every MCP tool would need a confirmation
		// nobody can give headless, so the CLI drops them all, silently.
		{"trust false", cliRun{trust: false}, nil},
		// Trusted: all but write_file. Headless, the CLI excludes its own
		// write_file, and it matches excluded names against MCP tools'
		// unprefixed names too.
		{"trust true", cliRun{trust: true}, withoutWrite},
		{"trust false + yolo", cliRun{trust: false, args: []string{"--approval-mode", "yolo"}}, servedTools},
		{"trust true + yolo", cliRun{trust: true, args: []string{"--approval-mode", "yolo"}}, servedTools},
		{"trust false + allowed tools", cliRun{trust: false, settings: map[string]any{"tools": map[string]any{
			"allowed": []string{"mcp_toolwarden_read_file", "mcp_toolwarden_write_file"}}}}, []string{"read_file"}},
		// The policy engine's way (--allowed-tools and tools.allowed are
		// deprecated): allow the server's tools without asking.
		{"trust false + policy allows toolwarden", cliRun{trust: false, policy: allowToolwarden}, withoutWrite},
		// mcp.allowed (or --allowed-mcp-server-names) both limits the
		// servers started and allows their tools without asking.
		{"trust false + mcp.allowed", cliRun{trust: false, settings: map[string]any{"mcp": map[string]any{"allowed": []string{"toolwarden"}}}}, withoutWrite},
		// Headless only: interactive runs still ask.
		{"trust false + mcp.autoAllowInHeadless", cliRun{trust: false, settings: map[string]any{"mcp": map[string]any{"autoAllowInHeadless": true}}}, withoutWrite},
		{"trust false + allowed server", cliRun{trust: false, args: []string{"--allowed-mcp-server-names", "toolwarden"}}, withoutWrite},
		{"trust true + includeTools", cliRun{trust: true, server: map[string]any{"includeTools": []string{"read_file", "write_file"}}}, []string{"read_file"}},
		{"trust true + excludeTools", cliRun{trust: true, server: map[string]any{"excludeTools": []string{"delete_file"}}},
			[]string{"create_directory", "directory_tree", "edit_file", "file_info", "grep_files", "list_directory",
				"move_file", "read_file", "read_multiple_files", "search_files"}},
		// --skip-trust trusts the folder too late: the project's
		// .gemini/settings.json, and so toolwarden, is never loaded.
		{"trust true + --skip-trust", cliRun{trust: true, skipTrust: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.run.run(t, answerDone)
			assert.Equal(t, tc.want, toolwardenDeclared(t, res.fake))
			// Tools missing because the CLI dropped them, not because
			// toolwarden failed: it was asked for its tools, except when
			// the CLI never read the project settings.
			assert.Equal(t, !tc.run.skipTrust, res.listed(), "toolwarden was asked for its tools")
		})
	}
	if !t.Failed() {
		observe(t, geminiCLI, geminiCLIVersion, "tools", fmt.Sprintf("✓ %d of %d headless, as `mcp_toolwarden_*`; `write_file` only with `--approval-mode yolo`",
			len(servedTools)-1, len(servedTools)))
	}
}

// geminiCLI names the Gemini CLI in the client table.
const geminiCLI = "Gemini CLI (`@google/gemini-cli`)"

// TestGeminiCLIClient makes the model call read_file twice, the second
// time with the wait_for_previous argument the CLI adds to every tool's
// schema, and records the exact arguments toolwarden receives.
func TestGeminiCLIClient(t *testing.T) {
	res := cliRun{trust: true}.run(t,
		fake.Reply(fake.Call("c1", "mcp_toolwarden_read_file", map[string]any{"path": "hello.txt"})),
		fake.Reply(fake.Call("c2", "mcp_toolwarden_read_file", map[string]any{"path": "hello.txt", "wait_for_previous": true})),
		fake.Reply(fake.Text("The file greets you.")))
	reqs := mainRequests(res.fake)
	require.Len(t, reqs, 3, "prompt, then one request per function response")

	// What the model is told: toolwarden's schema plus wait_for_previous.
	decl := declarations(reqs[0])["mcp_toolwarden_read_file"]
	require.NotNil(t, decl)
	schema, _ := decl["parametersJsonSchema"].(map[string]any)
	if schema == nil {
		schema, _ = decl["parameters"].(map[string]any)
	}
	props, _ := schema["properties"].(map[string]any)
	assert.Contains(t, props, "wait_for_previous", "the CLI adds wait_for_previous to MCP tools' schemas")

	// The first call works end to end and reaches the model.
	fr := reqs[1].FunctionResponses()
	require.Len(t, fr, 1)
	out, _ := json.Marshal(fr[0])
	assert.Contains(t, string(out), "hello from toolwarden")

	calls := res.calls()
	require.Len(t, calls, 2, "both calls reach toolwarden")
	assert.Equal(t, map[string]any{"path": "hello.txt"}, calls[0]["arguments"])
	assert.Equal(t, map[string]any{"path": "hello.txt", "wait_for_previous": true}, calls[1]["arguments"],
		"the CLI forwards wait_for_previous unchanged")
	assert.Equal(t, 2, audittest.Count(t, filepath.Join(filepath.Dir(res.ws), "audit.jsonl"), "read_file", guard.Allow),
		"both calls are allowed: wait_for_previous is a client control argument (policy.client_control_args), dropped before validation")

	recordCalls(t, decl, calls)
	if !t.Failed() {
		observe(t, geminiCLI, geminiCLIVersion, "structured output", "✓ read_file's result reaches the model")
	}
}

// recordCalls compares what the CLI sent with
// testdata/gemini-cli-calls.json (rewritten by -update-gemini-cli), so a
// new CLI version that sends something else is noticed.
func recordCalls(t *testing.T, decl map[string]any, calls []map[string]any) {
	t.Helper()
	for _, c := range calls {
		delete(c, "_meta") // progress tokens differ from run to run
	}
	// Only the parts of the declaration the CLI decides: toolwarden's own
	// descriptions may change without the client changing.
	schema, _ := decl["parametersJsonSchema"].(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	rec := map[string]any{
		"client": "@google/gemini-cli " + geminiCLIVersion,
		"note": "Recorded by e2e TestGeminiCLIClient (-update-gemini-cli): how the CLI declares toolwarden's read_file " +
			"to the model (its schema keys, plus the property it adds), and the params of the tools/call requests it sends " +
			"toolwarden when the model calls read_file without and then with wait_for_previous.",
		"declaration": map[string]any{
			"name": decl["name"], "schema_field": "parametersJsonSchema", "properties": names,
			"additionalProperties": schema["additionalProperties"], "required": schema["required"],
			"added_property": map[string]any{"wait_for_previous": props["wait_for_previous"]},
		},
		"tools_call":          calls,
		"client_added_params": []string{"wait_for_previous"},
	}
	got, err := json.MarshalIndent(rec, "", "  ")
	require.NoError(t, err)
	path := filepath.Join("testdata", "gemini-cli-calls.json")
	if *updateGeminiCLI {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, append(got, '\n'), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update-gemini-cli to record it")
	assert.JSONEq(t, string(want), string(got), "Gemini CLI sends something else than recorded; if expected, run with -update-gemini-cli")
}

// TestGeminiCLIToolError makes the model call write_file, which toolwarden
// denies (it needs an approval and the CLI cannot elicit), and checks the
// error reaches the model whole: code, message, hint and rule. Sent as a
// JSON text, the CLI turned it into structuredContent, its SDK validated
// that against write_file's output schema and the model got only "MCP
// error -32602: Structured content does not match the tool's output
// schema" (docs/errors.md).
func TestGeminiCLIToolError(t *testing.T) {
	res := cliRun{trust: true, args: []string{"--approval-mode", "yolo"}}.run(t,
		fake.Reply(fake.Call("w1", "mcp_toolwarden_write_file", map[string]any{"path": "out.txt", "content": "x"})),
		fake.Reply(fake.Text("I could not write the file.")))
	reqs := mainRequests(res.fake)
	require.Len(t, reqs, 2, "prompt, then the function response")
	fr := reqs[1].FunctionResponses()
	require.Len(t, fr, 1)
	raw, err := json.Marshal(fr[0])
	require.NoError(t, err)
	seen := string(raw)
	for _, want := range []string{"denied.approval_unavailable: ", `needs approval`, `\nHint: This call needs a human's approval`, `\nRule: approval.elicit`} {
		assert.Contains(t, seen, want, "what the model got")
	}
	assert.NotContains(t, seen, "-32602")
	assert.NotContains(t, seen, "Structured content does not match")
	require.Len(t, res.calls(), 1, "the call reached toolwarden")
	assert.NoFileExists(t, filepath.Join(res.ws, "out.txt"))
	elicits := declaresElicitation(res.rpc)
	assert.False(t, elicits, "the denial says the CLI did not declare elicitation")
	if !t.Failed() {
		observe(t, geminiCLI, geminiCLIVersion, "errors", "✓ code, message, hint and rule reach the model (denied `write_file`)")
		observeProtocol(t, geminiCLI, geminiCLIVersion, "stdio", negotiated(res.rpc, res.answered))
		observe(t, geminiCLI, geminiCLIVersion, "elicitation", "✗ not declared: a call needing approval is `denied.approval_unavailable` unless the page or terminal approver is set")
	}
}

// declaresElicitation reports whether the client declared the
// elicitation capability: in its initialize request, or (protocol
// 2026-07-28, stateless) in a request's _meta.
func declaresElicitation(rpc []map[string]any) bool {
	for _, m := range rpc {
		params, _ := m["params"].(map[string]any)
		caps, _ := params["capabilities"].(map[string]any)
		if m["method"] != "initialize" {
			meta, _ := params["_meta"].(map[string]any)
			caps, _ = meta["io.modelcontextprotocol/clientCapabilities"].(map[string]any)
		}
		if _, ok := caps["elicitation"]; ok {
			return true
		}
	}
	return false
}

// TestGeminiCLIApprovalAndRunScript: with approval.channel [terminal], the
// model writes twice; `toolwarden approvals` approves the first write and
// denies the second, and each outcome reaches the model as the function
// response. Then a Python run_script round-trips, and the test records
// whether the CLI asked for progress and took the notifications. Headless,
// the CLI declares write_file only with --approval-mode yolo
// (TestGeminiCLIHeadlessNeeds).
func TestGeminiCLIApprovalAndRunScript(t *testing.T) {
	testenv.Root(t) // the sandbox of run_script
	res := cliRun{trust: true, args: []string{"--approval-mode", "yolo"}, serve: serveOpts{approvals: true, runScript: true},
		decisions: []decision{approve, deny}}.run(t,
		fake.Reply(fake.Call("w1", "mcp_toolwarden_write_file", approvedWrite)),
		fake.Reply(fake.Call("w2", "mcp_toolwarden_write_file", deniedWrite)),
		fake.Reply(fake.Call("s1", "mcp_toolwarden_run_script", pythonScript)),
		fake.Reply(fake.Text("Wrote one file; the script printed 42.")))
	checkApprover(t, res.approver)
	checkWorkspace(t, res.ws)
	reqs := mainRequests(res.fake)
	require.Len(t, reqs, 4, "prompt, then one request per function response")
	response := func(i int) string {
		fr := reqs[i].FunctionResponses()
		require.Len(t, fr, 1)
		raw, err := json.Marshal(fr[0])
		require.NoError(t, err)
		return string(raw)
	}
	assert.Contains(t, response(1), `bytes_written`, "the approved write's result reaches the model")
	denied := response(2)
	for _, want := range []string{"denied.approval_declined: ", "not this one", `\nRule: approval.declined`} {
		assert.Contains(t, denied, want, "the denial reaches the model")
	}
	checkScriptOutput(t, response(3))

	asked, notes := progressSeen(res.rpc, res.answered)
	t.Logf("progress: token sent %v, %d notifications", asked, notes)
	if !t.Failed() {
		observe(t, geminiCLI, geminiCLIVersion, approvalColumn, "✓ terminal (`--approval-mode yolo` to declare write_file): the approved write's result and the denial with its reason reach the model")
		observe(t, geminiCLI, geminiCLIVersion, "run_script", "✓ Python in the runsc sandbox, stdout reaches the model")
		observe(t, geminiCLI, geminiCLIVersion, "progress", progressCell(t, asked, notes, "routed to the running call's view, none printed headless"))
	}
}

// TestGeminiCLIHTTP: toolwarden over streamable HTTP, configured with
// httpUrl and an Authorization header; read_file's result reaches the model.
func TestGeminiCLIHTTP(t *testing.T) {
	ws, env := workspace(t)
	base := startHTTP(t, ws, env)
	res := cliRun{trust: true, http: base}.run(t,
		fake.Reply(fake.Call("r1", "mcp_toolwarden_read_file", map[string]any{"path": "hello.txt"})),
		fake.Reply(fake.Text("The file greets you.")))
	reqs := mainRequests(res.fake)
	require.Len(t, reqs, 2)
	assert.Contains(t, toolwardenDeclared(t, res.fake), "read_file")
	fr := reqs[1].FunctionResponses()
	require.Len(t, fr, 1)
	raw, err := json.Marshal(fr[0])
	require.NoError(t, err)
	assert.Contains(t, string(raw), "hello from toolwarden")
	assert.Equal(t, 1, audittest.Count(t, filepath.Join(filepath.Dir(ws), "audit.jsonl"), "read_file", guard.Allow), "the HTTP server ran it")
	if !t.Failed() {
		observe(t, geminiCLI, geminiCLIVersion, "HTTP", "✓ streamable HTTP (`httpUrl`), bearer token in `headers`")
	}
}

// TestGeminiCLIResources: toolwarden's stored artifacts are resources; the
// CLI gives the model its read_mcp_resource tool once a server lists any,
// and the artifact read through it reaches the model.
func TestGeminiCLIResources(t *testing.T) {
	ws, env := artifactEnv(t)
	uri := storeArtifact(t, ws, env)
	res := cliRun{trust: true, serve: serveOpts{resources: true}, ws: ws, env: env}.run(t,
		fake.Reply(fake.Call("r1", "read_mcp_resource", map[string]any{"uri": uri})),
		fake.Reply(fake.Text("The artifact says hello.")))
	reqs := mainRequests(res.fake)
	require.Len(t, reqs, 2)
	assert.Contains(t, declarations(reqs[0]), "read_mcp_resource", "the CLI declares its resource tool")
	fr := reqs[1].FunctionResponses()
	require.Len(t, fr, 1)
	raw, err := json.Marshal(fr[0])
	require.NoError(t, err)
	assert.Contains(t, string(raw), "hello from an artifact", "the artifact reaches the model")
	if !t.Failed() {
		observe(t, geminiCLI, geminiCLIVersion, "resources", "✓ its `read_mcp_resource` tool reads a stored artifact; the text reaches the model")
	}
}
