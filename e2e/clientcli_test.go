package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// What the tests of the CLI clients (Gemini CLI, Claude Code, Codex CLI)
// share: toolwarden started by the client through a recording wrapper,
// a terminal approver that decides the calls waiting on it the way a
// human at `toolwarden approvals` would, and the scripts the stand-in
// models run.

// cliTimeout bounds one run of a CLI client. A run is 30-60 s on a loaded
// machine; one that waits for approvals and a sandboxed script takes longer.
const cliTimeout = 4 * time.Minute

// ctxCLI is ctxT for a client run.
func ctxCLI(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	t.Cleanup(cancel)
	return ctx
}

// serveOpts says what a client's toolwarden offers beyond the defaults.
type serveOpts struct {
	// approvals asks for approvals on the terminal channel only
	// (approval.channel [terminal]): the client's own elicitation, if
	// any, is never used, and `toolwarden approvals` decides.
	approvals bool
	// page asks on the approval page only (approval.channel [page]); its
	// one-time URL goes to toolwarden's stderr, kept in a file.
	page bool
	// runScript offers run_script in the runsc sandbox, without asking
	// (runScriptArgs); it needs root here.
	runScript bool
	// resources offers the artifact tools, and so the artifacts as
	// resources; env must hold the store's settings (artifactEnv).
	resources bool
	// config is more of toolwarden's config file (YAML after the
	// approval settings): upstreams, policy.
	config string
}

// stdioServer is toolwarden as a CLI client starts it over stdio.
type stdioServer struct {
	// command and args are what the client is configured to run.
	command string
	args    []string
	// sent and answered log each JSON-RPC line the client sent toolwarden
	// and each it got back.
	sent, answered string
	// env runs `toolwarden approvals` against this server.
	env []string
	// stderr, when set, is where toolwarden's stderr goes (the page's URL).
	stderr string
}

// newStdioServer writes the wrapper a client runs as toolwarden: it tees
// both directions of the stdio JSON-RPC to files and exports the
// toolwarden settings of env itself, since some clients (Codex) start
// their MCP servers with a few variables of their own only.
func newStdioServer(t *testing.T, ws string, env []string, o serveOpts) stdioServer {
	t.Helper()
	parent := filepath.Dir(ws)
	s := stdioServer{command: filepath.Join(parent, "toolwarden-tee"), args: []string{"serve", "--workspace", ws},
		sent: filepath.Join(parent, "rpc.jsonl"), answered: filepath.Join(parent, "rpc-answers.jsonl"), env: env}
	exports := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "TOOLWARDEN_") {
			exports[k] = v
		}
	}
	flags := s.setUp(t, parent, o, exports)
	var script strings.Builder
	script.WriteString("#!/bin/sh\n")
	for k, v := range exports {
		fmt.Fprintf(&script, "export %s=%s\n", k, shellQuote(v))
	}
	quoted := make([]string, len(flags))
	for i, f := range flags {
		quoted[i] = shellQuote(f)
	}
	if s.stderr != "" {
		quoted = append(quoted, "2>>"+shellQuote(s.stderr))
	}
	fmt.Fprintf(&script, "tee %s | %s \"$@\" %s | tee %s\n", shellQuote(s.sent), shellQuote(binary), strings.Join(quoted, " "), shellQuote(s.answered))
	require.NoError(t, os.WriteFile(s.command, []byte(script.String()), 0o755))
	return s
}

// setUp prepares what o asks for, adding to the wrapper's exports, and
// returns the flags toolwarden gets after the client's arguments (in the
// wrapper: a client may take them for its own, the Inspector's CLI takes
// --config).
func (s *stdioServer) setUp(t *testing.T, parent string, o serveOpts, exports map[string]string) (flags []string) {
	t.Helper()
	var channels []string
	if o.approvals {
		// The control socket's path must fit a Unix socket address:
		// a short directory of its own, not the test's temp dir.
		runtime, err := os.MkdirTemp("", "tw-rt-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(runtime) })
		exports["XDG_RUNTIME_DIR"] = runtime
		s.env = append(append([]string(nil), s.env...), "XDG_RUNTIME_DIR="+runtime)
		channels = append(channels, "terminal")
	}
	if o.page {
		s.stderr = filepath.Join(parent, "toolwarden-stderr.log")
		channels = append(channels, "page")
	}
	if channels != nil || o.config != "" {
		body := o.config
		if channels != nil {
			body = "approval:\n  channel: [" + strings.Join(channels, ", ") + "]\n" + body
		}
		cfg := filepath.Join(parent, "toolwarden.yaml")
		require.NoError(t, os.WriteFile(cfg, []byte(body), 0o644))
		flags = append(flags, "--config", cfg)
	}
	if o.runScript {
		flags = append(flags, runScriptArgs...)
		exports["TOOLWARDEN_EXEC_BACKEND"] = "runsc"
		exports["TOOLWARDEN_EXEC_RUNSC_PATH"] = currentRunsc(t)
	}
	if o.resources {
		flags = append(flags, "--allow", "*_artifact*")
	}
	return flags
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// rpc returns what the client sent toolwarden, and what it got back.
func (s stdioServer) rpc(t *testing.T) (sent, answered []map[string]any) {
	return readRPC(t, s.sent), readRPC(t, s.answered)
}

// decision is one answer of the terminal approver: the arguments after
// `toolwarden approvals`, the approval ID put after the first.
type decision []string

var (
	approve = decision{"approve"}
	deny    = decision{"deny", "--reason", "not this one"}
)

// waitingCall is a call the terminal approver saw waiting.
type waitingCall struct {
	ID, Tool, Preview string
}

// approverResult is what the terminal approver saw and decided.
type approverResult struct {
	seen []waitingCall
	err  error
}

// startApprover decides, in order, the calls that start waiting on s,
// each as soon as it waits: on the approval page when s runs one
// (pageDecide), else through the built `toolwarden approvals` command on
// s's control socket. Stop it when the client has run; it reports what it
// saw.
func startApprover(ctx context.Context, s stdioServer, decisions ...decision) (stop func() approverResult) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan approverResult, 1)
	go func() {
		var res approverResult
		defer func() { done <- res }()
		if s.stderr != "" && len(decisions) > 0 {
			res = pageDecide(ctx, s.stderr, decisions)
			return
		}
		for _, d := range decisions {
			call, err := nextWaiting(ctx, s.env)
			if err != nil {
				res.err = fmt.Errorf("waiting for a call to %s: %w", d[0], err)
				return
			}
			res.seen = append(res.seen, call)
			cmd := exec.CommandContext(ctx, binary, append([]string{"approvals", d[0], call.ID}, d[1:]...)...)
			cmd.Env = s.env
			if out, err := cmd.CombinedOutput(); err != nil {
				res.err = fmt.Errorf("approvals %s %s: %v: %s", d[0], call.ID, err, out)
				return
			}
		}
	}()
	return func() approverResult {
		cancel()
		return <-done
	}
}

// nextWaiting polls `toolwarden approvals list --json` until one call waits.
func nextWaiting(ctx context.Context, env []string) (waitingCall, error) {
	for {
		cmd := exec.CommandContext(ctx, binary, "approvals", "list", "--json")
		cmd.Env = env
		out, err := cmd.Output()
		var calls []waitingCall
		if err == nil && json.Unmarshal(out, &calls) == nil && len(calls) > 0 {
			return calls[0], nil
		}
		if err := sleepCtx(ctx); err != nil {
			return waitingCall{}, err
		}
	}
}

// pageDecide plays the human on the approval page with an HTTP client, as
// the page's form does (TestApprovalPageInBrowser proves the form sends
// this): it logs in with the one-time URL from toolwarden's stderr, then,
// for each decision, waits for a new call's card and posts its fields with
// the action. The page takes no reason.
func pageDecide(ctx context.Context, stderrLog string, decisions []decision) (res approverResult) {
	login, err := pageURL(ctx, stderrLog)
	if err != nil {
		res.err = err
		return res
	}
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	origin, _, _ := strings.Cut(strings.TrimPrefix(login, "http://"), "/")
	origin = "http://" + origin
	base, err := pageLogin(ctx, hc, login)
	if err != nil {
		res.err = err
		return res
	}
	decided := map[string]bool{}
	for _, d := range decisions {
		var form neturl.Values
		for form == nil {
			var page string
			if _, err := pageDo(ctx, hc, http.MethodGet, base, "", &page); err != nil {
				res.err = err
				return res
			}
			f := neturl.Values{}
			for _, m := range hiddenField.FindAllStringSubmatch(page, -1) {
				if m[2] != "" && f.Get(m[1]) == "" { // the first card's, not the empty <template>'s
					f.Set(m[1], m[2])
				}
			}
			if f.Get("csrf") != "" && !decided[f.Get("id")] {
				form = f
			} else if err := sleepCtx(ctx); err != nil {
				res.err = fmt.Errorf("waiting for a call to %s on the page: %w", d[0], err)
				return res
			}
		}
		decided[form.Get("id")] = true
		res.seen = append(res.seen, waitingCall{ID: form.Get("id")})
		form.Set("action", d[0])
		if code, err := pageDo(ctx, hc, http.MethodPost, base+"decide", origin, nil, form); err != nil || code != http.StatusSeeOther {
			res.err = fmt.Errorf("deciding %s on the page: %d %v", d[0], code, err)
			return res
		}
	}
	return res
}

// pageLogin trades the one-time URL for the session cookie and returns
// the session's page: the cookie is sent only under its path.
func pageLogin(ctx context.Context, hc *http.Client, login string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, login, nil)
	if err != nil {
		return "", err
	}
	res, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("logging in on the page: %w", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		return "", fmt.Errorf("logging in on the page: HTTP %d", res.StatusCode)
	}
	return originOf(login) + res.Header.Get("Location"), nil
}

// pageURL waits for the page's one-time URL in toolwarden's stderr.
func pageURL(ctx context.Context, stderrLog string) (string, error) {
	for {
		data, _ := os.ReadFile(stderrLog)
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "http://127.0.0.1:") {
				return line, nil
			}
		}
		if err := sleepCtx(ctx); err != nil {
			return "", fmt.Errorf("no approval page URL in toolwarden's stderr: %w", err)
		}
	}
}

// pageDo sends one request to the page, with a form and Origin for a
// POST, and returns its status and, into body, its text.
func pageDo(ctx context.Context, hc *http.Client, method, url, origin string, body *string, form ...neturl.Values) (int, error) {
	var payload io.Reader
	if len(form) > 0 {
		payload = strings.NewReader(form[0].Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, url, payload)
	if err != nil {
		return 0, err
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if body != nil {
		*body = string(data)
	}
	return resp.StatusCode, err
}

// sleepCtx waits a polling interval, or until ctx ends.
func sleepCtx(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(50 * time.Millisecond):
		return nil
	}
}

// The scripted model's calls in the approval and run_script runs: a write
// the human approves, one they deny, and a Python script that runs long
// enough for toolwarden to report progress (every 2 s) when the client
// asks for it.
var (
	approvedWrite = map[string]any{"path": "notes/approved.txt", "content": "approved on the terminal\n", "create_dirs": true}
	deniedWrite   = map[string]any{"path": "notes/denied.txt", "content": "denied\n", "create_dirs": true}
	pythonScript  = map[string]any{"interpreter": "python",
		"script": "import time\nfor i in range(3):\n    print('tick', i, flush=True)\n    time.sleep(2)\nprint(6 * 7)\n"}
)

// checkScriptOutput checks what the model got for pythonScript holds its
// output (each client quotes it its own way).
func checkScriptOutput(t *testing.T, got string) {
	t.Helper()
	for _, want := range []string{"tick 0", "tick 2", "42", `exit_code`} {
		require.Contains(t, got, want, "the script's output reaches the model")
	}
}

// progressSeen reports whether the client asked for progress on its
// run_script call (a progressToken in _meta) and how many progress
// notifications toolwarden sent it.
func progressSeen(sent, answered []map[string]any) (asked bool, notifications int) {
	for _, m := range sent {
		params, _ := m["params"].(map[string]any)
		if m["method"] != "tools/call" || params["name"] != "run_script" {
			continue
		}
		meta, _ := params["_meta"].(map[string]any)
		_, asked = meta["progressToken"]
	}
	for _, m := range answered {
		if m["method"] == "notifications/progress" {
			notifications++
		}
	}
	return asked, notifications
}

// progressCell is the table's progress cell for what a client run showed:
// when the client asked, toolwarden must have sent notifications (one
// every 2 s; their number varies with the machine's load, so the cell
// does not say it) and the run went on to its result.
func progressCell(t *testing.T, asked bool, notifications int, shown string) string {
	t.Helper()
	if !asked {
		require.Zero(t, notifications, "no progressToken, no notifications")
		return "✗ sends no progressToken: toolwarden sends no notifications (run_script, 6 s, still round-trips)"
	}
	require.Positive(t, notifications, "toolwarden reported the 6 s script's progress")
	return "✓ asks (progressToken); a 6 s run_script's notifications accepted, its result reaches the model; " + shown
}

// checkApprover checks the terminal approver saw the approved, then the
// denied write, and returns nothing else.
func checkApprover(t *testing.T, res approverResult) {
	t.Helper()
	require.NoError(t, res.err)
	require.Len(t, res.seen, 2)
	for i, path := range []string{"notes/approved.txt", "notes/denied.txt"} {
		require.Equal(t, "write_file", res.seen[i].Tool)
		require.Contains(t, res.seen[i].Preview, "Create file "+path)
	}
}

// checkWorkspace checks the approved write ran and the denied one did not.
func checkWorkspace(t *testing.T, ws string) {
	t.Helper()
	require.Equal(t, "approved on the terminal\n", readWS(ws, "notes/approved.txt"))
	require.Equal(t, "<missing>", readWS(ws, "notes/denied.txt"))
}

// httpToken is the bearer token startHTTP's server requires.
const httpToken = "e2e-token-0123456789"

// artifactText is the content storeArtifact stores.
const artifactText = "hello from an artifact\n"

// storeArtifact stores artifactText under a new task with `toolwarden
// call` and returns its resource URI; env holds the artifact store's
// settings (artifactEnv).
func storeArtifact(t *testing.T, ws string, env []string) string {
	t.Helper()
	args, err := json.Marshal(map[string]any{"task_id": uuid.NewString(), "name": "notes.txt", "content": artifactText, "encoding": "text"})
	require.NoError(t, err)
	cmd := exec.Command(binary, "call", "--workspace", ws, "--allow", "store_artifact", "--approval", "store_artifact=allow", "store_artifact", string(args))
	cmd.Env = env
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	var res struct {
		StructuredContent struct{ URI string } `json:"structuredContent"`
	}
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	require.NotEmpty(t, res.StructuredContent.URI, "%s", out)
	return res.StructuredContent.URI
}
