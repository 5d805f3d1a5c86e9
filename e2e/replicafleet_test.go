package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// replicaToken is the bearer token every replica accepts.
const replicaToken = "e2e-replica-token-0123456789"

// fleet is three toolwarden replicas behind HAProxy (the shipped
// configs/examples/haproxy.cfg), sharing a private Redis unless alone.
type fleet struct {
	t        *testing.T
	ws, dir  string
	env      []string
	redis    *testenv.Redis
	replicas map[string]*replicaProc
	lb       string // http://host:port/mcp through HAProxy
}

type replicaProc struct {
	addr  string
	audit string
	cmd   *exec.Cmd
}

// startFleet starts the fleet with the extra environment; shared says
// whether the replicas share their state in Redis.
func startFleet(t *testing.T, shared bool, extra ...string) *fleet {
	haproxy := testenv.Need(t, "TOOLWARDEN_TEST_HAPROXY_BIN")[0]
	ws, env := workspace(t)
	f := &fleet{t: t, ws: ws, dir: t.TempDir(), replicas: map[string]*replicaProc{}}
	f.env = append(env, "TOOLWARDEN_HTTP_TOKEN="+replicaToken)
	if shared {
		f.redis = testenv.StartRedis(t)
		f.env = append(f.env, "TOOLWARDEN_CLUSTER_REDIS_URL="+f.redis.URL, "TOOLWARDEN_CLUSTER_REDIS_PASSWORD_ENV=TW_REDIS_PASSWORD",
			"TW_REDIS_PASSWORD="+f.redis.Password, "TOOLWARDEN_CLUSTER_SECRET_ENV=TW_CLUSTER_SECRET",
			"TW_CLUSTER_SECRET=e2e-cluster-secret-shared-by-all-replicas-0123456789")
	}
	f.env = append(f.env, extra...)
	lbEnv := []string{"TOOLWARDEN_LB_BIND=" + freeAddr(t)}
	for _, name := range []string{"a", "b", "c"} {
		r := &replicaProc{addr: freeAddr(t), audit: filepath.Join(f.dir, name+".jsonl")}
		f.replicas[name] = r
		f.start(name)
		lbEnv = append(lbEnv, "TOOLWARDEN_REPLICA_"+strings.ToUpper(name)+"="+r.addr)
	}
	f.lb = "http://" + strings.TrimPrefix(lbEnv[0], "TOOLWARDEN_LB_BIND=") + "/mcp"
	startHAProxy(t, haproxy, lbEnv)
	return f
}

// start (re)starts replica name on its address and waits until it serves.
func (f *fleet) start(name string) {
	r := f.replicas[name]
	require.NoError(f.t, os.MkdirAll(filepath.Join(f.dir, "run-"+name), 0o700))
	cmd := exec.Command(binary, "serve", "--workspace", f.ws, "--http", r.addr)
	cmd.Env = append(f.cliEnv(name), "TOOLWARDEN_AUDIT_PATH="+r.audit, "TOOLWARDEN_CLUSTER_REPLICA_ID=tw-"+name)
	stderr, err := cmd.StderrPipe()
	require.NoError(f.t, err)
	require.NoError(f.t, cmd.Start())
	sc := bufio.NewScanner(stderr)
	started, lines := false, []string{}
	for !started && sc.Scan() {
		started = strings.Contains(sc.Text(), "serving HTTP")
		lines = append(lines, sc.Text())
	}
	require.True(f.t, started, "replica %s did not start: %s", name, strings.Join(lines, "\n"))
	go func() {
		for sc.Scan() {
		}
	}()
	r.cmd = cmd
	f.t.Cleanup(func() { f.kill(name) })
}

// cliEnv is the environment of replica name and of the commands that
// talk to it over its control socket (its own XDG_RUNTIME_DIR).
func (f *fleet) cliEnv(name string) []string {
	return append(f.env[:len(f.env):len(f.env)], "XDG_RUNTIME_DIR="+filepath.Join(f.dir, "run-"+name))
}

// kill kills replica name with SIGKILL, as a crash would.
func (f *fleet) kill(name string) {
	r := f.replicas[name]
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.cmd = nil
}

// startHAProxy runs HAProxy in the foreground over the shipped config.
func startHAProxy(t *testing.T, bin string, env []string) {
	cfg, err := filepath.Abs("../configs/examples/haproxy.cfg")
	require.NoError(t, err)
	cmd := exec.Command(bin, "-db", "-f", cfg)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	bind := strings.TrimPrefix(env[0], "TOOLWARDEN_LB_BIND=")
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", bind)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "HAProxy did not listen: %s", &out)
}

// replicaURL is replica name's own endpoint, bypassing the balancer.
func (f *fleet) replicaURL(name string) string { return "http://" + f.replicas[name].addr + "/mcp" }

var replicaHTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}

// statelessCall makes one tools/call of the 2026-07-28 protocol (no
// session, the handshake's facts in _meta) to url.
func statelessCall(url, tool string, args map[string]any, rt mcp.MultiRoundTripParams) (*mcp.CallToolResult, error) {
	params := map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{
		mcp.MetaKeyProtocolVersion:    "2026-07-28",
		mcp.MetaKeyClientInfo:         map[string]any{"name": "replicas-e2e", "version": "1"},
		mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
	}}
	if rt.RequestState != "" {
		params["requestState"], params["inputResponses"] = rt.RequestState, rt.InputResponses
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool, "Authorization": "Bearer " + replicaToken} {
		req.Header.Set(k, v)
	}
	resp, err := replicaHTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := answerBody(resp)
	if err != nil {
		return nil, err
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.Result == nil {
		return nil, fmt.Errorf("not a result: %s", raw)
	}
	return mcp.ParseCallToolResult(&env.Result)
}

// answerBody is the JSON-RPC answer of a response: its JSON body, or the
// event stream's event that has an id.
func answerBody(resp *http.Response) ([]byte, error) {
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
		return io.ReadAll(resp.Body)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:"))
		if ok && bytes.Contains(data, []byte(`"result"`)) {
			return bytes.TrimSpace(data), nil
		}
	}
	return nil, fmt.Errorf("event stream ended without an answer")
}
