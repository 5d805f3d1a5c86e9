package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/egress/egresstest"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// egressProbe runs in the sandbox: one brokered request to the allowed
// host with the placeholder, every refused way out, and a scan of what
// the sandbox can read for the real credential. It prints one JSON
// object.
const egressProbe = `
import json, os, socket, ssl, sys, urllib.request
port, real = sys.argv[1], sys.argv[2][::-1]  # given reversed, so argv does not hold it
out = {"env_token": os.environ.get("EGRESS_TEST_TOKEN", "")}
def fetch(url, headers=None):
    try:
        req = urllib.request.Request(url, headers=headers or {})
        with urllib.request.urlopen(req, timeout=30) as r:
            return "REACHED %d %s" % (r.status, r.read().decode())
    except Exception as e:
        return "REFUSED " + str(e)
out["allowed"] = fetch("https://localhost:%s/" % port, {"Authorization": "Bearer " + out["env_token"]})
for name, host in [("other_port", "localhost:1"), ("other_name", "example.invalid:" + port),
                   ("ip", "127.0.0.1:" + port), ("decimal", "2130706433:" + port), ("hex", "0x7f.1:" + port),
                   ("mapped", "[::ffff:127.0.0.1]:" + port)]:
    out[name] = fetch("https://%s/" % host)
def raw(family, kind, addr):
    try:
        s = socket.socket(family, kind)
        s.settimeout(5)
        s.connect(addr)
        if kind == socket.SOCK_DGRAM:
            s.send(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01")
            s.recv(512)
        return "REACHED"
    except Exception as e:
        return "REFUSED " + str(e)
out["raw_tcp"] = raw(socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", int(port)))
out["raw_tcp_out"] = raw(socket.AF_INET, socket.SOCK_STREAM, ("10.0.0.1", 443))
out["udp_dns"] = raw(socket.AF_INET, socket.SOCK_DGRAM, ("8.8.8.8", 53))
try:
    socket.getaddrinfo("example.com", 443)
    out["dns"] = "REACHED"
except Exception as e:
    out["dns"] = "REFUSED " + str(e)
found = []
needle = real.encode()
if real in json.dumps(dict(os.environ)):
    found.append("environ")
for pid in os.listdir("/proc"):
    if pid.isdigit():
        for f in ("environ", "cmdline"):
            try:
                if needle in open("/proc/%s/%s" % (pid, f), "rb").read():
                    found.append("/proc/%s/%s" % (pid, f))
            except Exception:
                pass
for top in ("/run", "/tmp", "/workspace", "/etc"):
    for d, _, files in os.walk(top):
        for f in files:
            p = os.path.join(d, f)
            try:
                if needle in open(p, "rb").read(1 << 22):
                    found.append(p)
            except Exception:
                pass
# The memory of every other process in the sandbox (the forwarder that
# relayed the traffic among them): this one holds the value only because
# it rebuilt it to search for it (its parent got it reversed).
# gVisor refuses a process the memory of its parent (the forwarder):
# what the sandboxed code cannot read, it cannot leak either.
scanned, pids, denied = 0, 0, 0
for pid in os.listdir("/proc"):
    if not pid.isdigit() or int(pid) == os.getpid():
        continue
    try:
        maps = open("/proc/%s/maps" % pid).read().splitlines()
        mem = open("/proc/%s/mem" % pid, "rb", 0)
    except PermissionError:
        denied += 1
        continue
    except Exception:
        continue
    pids += 1
    for line in maps:
        addr, perms = line.split()[:2]
        if not perms.startswith("r") or "[vvar]" in line or "[vsyscall]" in line:
            continue
        lo, hi = (int(x, 16) for x in addr.split("-"))
        try:
            mem.seek(lo)
            chunk = mem.read(min(hi - lo, 64 << 20))
        except Exception:
            continue
        scanned += len(chunk)
        if needle in chunk:
            found.append("/proc/%s/mem" % pid)
out["found"] = found
out["mem_pids"], out["mem_bytes"], out["mem_denied"] = pids, scanned, denied
print(json.dumps(out))
`

// egressToken is the real credential the proxy brokers in the egress
// tests; the sandbox only ever holds the placeholder.
const egressToken = "real-egress-credential-5f2c9a"

// egressTarget is the local HTTPS server the egress tests reach: it
// answers only a request carrying the real credential, and records the
// Authorization headers it received.
type egressTarget struct {
	ca   *egresstest.CA
	port string
	mu   sync.Mutex
	got  []string
}

func newEgressTarget(t *testing.T) *egressTarget {
	e := &egressTarget{ca: egresstest.NewCA(t)}
	srv := e.ca.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.got = append(e.got, r.Header.Get("Authorization"))
		e.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+egressToken {
			http.Error(w, "no credential", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, "hello brokered")
	}), "localhost")
	e.port = egresstest.Port(srv)
	return e
}

// config is a toolwarden.yaml allowing the target, brokering the token,
// trusting the test CA at caFile.
func (e *egressTarget) config(caFile string) string {
	return fmt.Sprintf(`exec:
  interpreters: [python]
  network:
    allow: ["localhost:%s"]
    credentials:
      - host: localhost
        header: Authorization
        value_env: EGRESS_TEST_TOKEN
        placeholder: TOOLWARDEN_EGRESS_TEST
    upstream_ca_file: %s
`, e.port, caFile)
}

// check asserts what the probe found and the audit log at auditPath:
// the target reached with the real value put in place of the
// placeholder, every other way out refused, the value nowhere in the
// sandbox, and each connection an audit line of the call.
func (e *egressTarget) check(t *testing.T, out map[string]any, auditPath string) {
	t.Helper()
	require.Equal(t, "TOOLWARDEN_EGRESS_TEST", out["env_token"], "the sandbox holds the placeholder")
	require.Equal(t, "REACHED 200 hello brokered", out["allowed"])
	for _, k := range []string{"other_port", "other_name", "ip", "decimal", "hex", "mapped"} {
		require.True(t, strings.HasPrefix(out[k].(string), "REFUSED") && strings.Contains(out[k].(string), "403"), "%s: %v", k, out[k])
	}
	for _, k := range []string{"raw_tcp", "raw_tcp_out", "udp_dns", "dns"} {
		require.True(t, strings.HasPrefix(out[k].(string), "REFUSED"), "%s: %v", k, out[k])
	}
	require.Empty(t, out["found"], "the real credential is nowhere in the sandbox")
	// Each other process's memory was either read or refused to the
	// sandboxed code (gVisor refuses it the forwarder's).
	require.True(t, out["mem_bytes"].(float64) > 0 || out["mem_denied"].(float64) > 0,
		"no other process's memory was read or refused: %v", out)
	e.mu.Lock()
	require.Contains(t, e.got, "Bearer "+egressToken, "the server received the real value")
	e.mu.Unlock()
	checkEgressAudit(t, auditPath, e.port, egressToken)
}

// TestEgressThroughBinary: a run_script with exec.network reaches an
// allowlisted local HTTPS server through the egress proxy, the proxy
// putting the real credential in place of the placeholder the sandbox
// holds; every other way out is refused; the real value is nowhere the
// sandbox can read; and each connection is an audit line linked to the
// call, never holding the value. For runsc and bwrap, as root;
// TestEgressAsOrdinaryAccount runs the same as an ordinary user.
func TestEgressThroughBinary(t *testing.T) {
	testenv.Root(t)
	target := newEgressTarget(t)
	port, token := target.port, egressToken

	for _, backend := range []string{"runsc", "bwrap", "bwrap-revoked"} {
		t.Run(backend, func(t *testing.T) {
			revoked := backend == "bwrap-revoked"
			backend = strings.TrimSuffix(backend, "-revoked")
			ws, env := workspace(t)
			cfg := filepath.Join(filepath.Dir(ws), "toolwarden.yaml")
			require.NoError(t, os.WriteFile(cfg, []byte(target.config(target.ca.File)), 0o600))
			env = append(env, "TOOLWARDEN_EXEC_BACKEND="+backend, "EGRESS_TEST_TOKEN="+token)
			args := append([]string{"serve", "--config", cfg, "--workspace", ws}, runScriptArgs...)
			if revoked {
				args = append(args, "--revoke", "net:connect:**:*")
			}
			c, err := client.NewStdioMCPClient(binary, env, args...)
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })
			initialize(t, c)

			out, sandbox := runProbe(t, c, port, token)
			require.Contains(t, sandbox, backend)
			if revoked {
				// The allow list names the host, the caller's capabilities do not.
				require.Contains(t, out["allowed"], "403", "%v", out["allowed"])
				require.Contains(t, auditText(t, auditPathOf(t, env)), `"outcome":"egress_denied"`)
				require.Contains(t, auditText(t, auditPathOf(t, env)), `capabilities.deny:\"net:connect:**:*\"`)
				return
			}
			target.check(t, out, auditPathOf(t, env))
		})
	}
}

// runProbe runs egressProbe and returns what it printed and the
// sandbox it ran in.
func runProbe(t *testing.T, c *client.Client, port, token string) (map[string]any, string) {
	t.Helper()
	stdout, sandbox := runPython(t, c, egressProbe, []string{port, reverse(token)}, 60)
	require.NotContains(t, stdout, token)
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &out), stdout)
	return out, sandbox
}

// runPython runs script with args in run_script, requires it to exit 0,
// and returns its stdout and the sandbox it ran in.
func runPython(t testing.TB, c *client.Client, script string, args []string, timeoutSeconds int) (stdout, sandbox string) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = "run_script"
	req.Params.Arguments = map[string]any{"interpreter": "python", "script": script, "args": args, "timeout_seconds": timeoutSeconds}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(timeoutSeconds)*time.Second+4*time.Minute)
	defer cancel()
	res, err := c.CallTool(ctx, req)
	require.NoError(t, err)
	text := res.Content[0].(mcp.TextContent).Text
	require.False(t, res.IsError, text)
	var run struct {
		Stdout, Stderr, Sandbox string
		ExitCode                int `json:"exit_code"`
	}
	require.NoError(t, json.Unmarshal([]byte(text), &run))
	require.Equal(t, 0, run.ExitCode, "stdout: %s\nstderr: %s", run.Stdout, run.Stderr)
	return run.Stdout, run.Sandbox
}

// checkEgressAudit: the allowed, brokered connection and the refused
// ones are audit lines carrying the run_script call's ID, and no line
// holds the credential.
func checkEgressAudit(t *testing.T, path, port, token string) {
	t.Helper()
	var call string
	var allowed, denied []map[string]any
	deadline := time.Now().Add(30 * time.Second)
	for {
		allowed, denied, call = nil, nil, ""
		text := auditText(t, path)
		require.NotContains(t, text, token, "no audit line holds the value")
		for _, l := range strings.Split(text, "\n") {
			var e map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &e))
			switch e["outcome"] {
			case "allowed":
				if e["tool"] == "run_script" {
					call, _ = e["call"].(string)
				}
			case "egress_allowed":
				allowed = append(allowed, e)
			case "egress_denied":
				denied = append(denied, e)
			}
		}
		if len(allowed) >= 1 && len(denied) >= 6 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.NotEmpty(t, call, "the call's allowed line carries its ID")
	require.Len(t, allowed, 1)
	a := allowed[0]
	require.Equal(t, call, a["call"])
	require.Equal(t, "localhost", a["host"])
	require.Equal(t, port, fmt.Sprint(a["port"]))
	require.Equal(t, true, a["credential_injected"])
	require.Equal(t, "run_script", a["tool"])
	require.Positive(t, a["bytes_up"])
	require.Positive(t, a["bytes_down"])
	rules := map[string]bool{}
	for _, d := range denied {
		require.Equal(t, call, d["call"])
		rules[d["rule"].(string)] = true
	}
	require.True(t, rules["exec.network.allow"], "%v", rules)
	require.True(t, rules["egress.target"], "%v", rules)
}

func reverse(s string) string {
	r := []byte(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}
