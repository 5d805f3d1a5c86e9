package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/egress/egresstest"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// egressCase is the part of a url, header or request_body case the
// egress mapping reads.
type egressCase struct {
	Method      string            `json:"method"`
	URL         string            `json:"url"`
	Headers     map[string]string `json:"headers"`
	ContentType string            `json:"content_type"`
	Body        string            `json:"body"`
}

// How an egress case is played (docs/security.md, "How the egress cases
// are played"). The corpus names outside hosts; the test reaches none, so
// each case is sent from a sandbox through the proxy either to the local
// server, or to the host it names when that host is what the case is
// about.
const (
	// playBrokered: the case's request (method, path, query, headers,
	// body) to the local server, allowlisted and brokered, so the proxy
	// terminates TLS and reads it: the attacker's host allowed, the
	// request's content the only control. url, headers, request_body,
	// encoding_evasion, false_positive and the benign ssrf case.
	playBrokered = "brokered local host"
	// playAsSent: the URL as the case gives it, for a host that is no DNS
	// name (an IP literal in any spelling): the SSRF cases.
	playAsSent = "as sent"
	// playHostname: the case's host (lower-cased by the proxy, as by DNS)
	// on the local server's port, its domain allowlisted by a wildcard of
	// its last two labels; the name is the payload, refused before it is
	// looked up. hostname_exfiltration and a host of four or more labels.
	playHostname = "wildcard-allowed host"
	// playNotListed: the case's host, not allowlisted: domain blocklist
	// cases, where the allowlist is the control.
	playNotListed = "host not allowlisted"
)

// egressPlay is one request the sandbox sends.
type egressPlay struct {
	ID      string            `json:"id"`
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	how     string
	allow   string // the allow entry it needs beside localhost's
}

// egressPlan maps a case to the request played, for the local server on
// port.
func egressPlan(c benchCase, port string) (egressPlay, error) {
	p := c.Payload.egressCase
	u, err := url.Parse(p.URL)
	if err != nil || u.Host == "" {
		return egressPlay{}, fmt.Errorf("%s: %q is no absolute URL", c.ID, p.URL)
	}
	play := egressPlay{ID: c.ID, Method: p.Method, Headers: map[string]string{}, Body: p.Body}
	if play.Method == "" {
		play.Method = http.MethodGet
	}
	for k, v := range p.Headers {
		play.Headers[k] = v
	}
	if p.ContentType != "" {
		play.Headers["Content-Type"] = p.ContentType
	}
	host := u.Hostname()
	labels := strings.Split(host, ".")
	switch {
	case configs.CheckHostName(host) != nil:
		play.how, play.URL = playAsSent, p.URL
	case contains(c.Tags, "domain_blocklist"):
		play.how = playNotListed
		u.Host = net.JoinHostPort(host, port)
	case c.Category == "hostname_exfiltration" || len(labels) >= 4:
		play.how = playHostname
		u.Host = net.JoinHostPort(host, port)
		play.allow = "*." + strings.ToLower(strings.Join(labels[len(labels)-2:], ".")) + ":" + port
	default:
		play.how = playBrokered
		u.Scheme, u.Host = "https", "localhost:"+port
	}
	if play.URL == "" {
		play.URL = u.String()
	}
	return play, nil
}

// egressPlayer runs in the sandbox: each play through urllib and the
// proxy in HTTPS_PROXY, its answer as status, rule and finding. urllib
// does not show a refused CONNECT's headers, so a refused tunnel is
// asked once more by hand to read them.
const egressPlayer = `
import json, os, socket, sys, urllib.error, urllib.request
from urllib.parse import urlsplit
proxy = urlsplit(os.environ["HTTPS_PROXY"])
def head_of(raw):
    head, _, body = raw.partition("\r\n\r\n")
    lines = head.split("\r\n")
    out = {"status": int(lines[0].split()[1]), "body": body[:300]}
    for l in lines[1:]:
        k, _, v = l.partition(":")
        if k.lower() == "x-toolwarden-rule": out["rule"] = v.strip()
        if k.lower() == "x-toolwarden-finding": out["finding"] = v.strip()
    return out
def refused_tunnel(u):
    s = socket.create_connection((proxy.hostname, proxy.port), timeout=20)
    target = "%s:%d" % (u.hostname, u.port or 443)
    s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
    raw = b""
    while b"\r\n\r\n" not in raw or not raw.startswith(b"HTTP/1.1 200"):
        chunk = s.recv(65536)
        if not chunk:
            break
        raw += chunk
    s.close()
    return head_of(raw.decode(errors="replace"))
def play(p):
    data = p["body"].encode() if p["body"] else None
    req = urllib.request.Request(p["url"], data=data, method=p["method"], headers=p["headers"])
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return {"status": r.status, "body": r.read(300).decode(errors="replace")}
    except urllib.error.HTTPError as e:
        return {"status": e.code, "rule": e.headers.get("X-Toolwarden-Rule", ""),
                "finding": e.headers.get("X-Toolwarden-Finding", ""), "body": e.read(300).decode(errors="replace")}
    except Exception as e:
        if "Tunnel connection failed" in str(e):
            return refused_tunnel(urlsplit(p["url"]))
        return {"status": 0, "body": str(e)[:300]}
print(json.dumps({p["id"]: play(p) for p in json.loads(sys.stdin.read()[::-1])}))
`

// egressAnswer is what the player saw for one case.
type egressAnswer struct {
	Status  int    `json:"status"`
	Rule    string `json:"rule"`
	Finding string `json:"finding"`
	Body    string `json:"body"`
}

// gauntletDLPOff plays the egress cases with exec.network.dlp.off: the
// proxy without its data-loss checks, for comparison. TestGauntlet then
// logs its table and compares nothing.
var gauntletDLPOff = flag.Bool("gauntlet-dlp-off", false, "play the egress cases with exec.network.dlp.off; log the table, compare and write nothing")

// gauntletMarker is a header each play carries, naming its case, so the
// local server can tell which cases reached it whole.
const gauntletMarker = "X-Gauntlet-Case"

// playEgress plays every egress case in one run_script through the
// built binary (exec.network, bwrap) and the egress proxy, against a
// local HTTPS server of a test CA, and returns each case's verdict and
// evidence: "block" for a refusal by the proxy (403 naming a rule),
// "allow" for a request that reached the local server, or that passed
// every check and was looked up (a name no test DNS answers: 502
// egress.resolve).
func playEgress(t *testing.T, cases []benchCase) map[string]benchResult {
	t.Helper()
	testenv.Root(t)
	ca := egresstest.NewCA(t)
	var mu sync.Mutex
	reached := map[string]bool{} // cases whose request reached the server whole
	srv := ca.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err == nil {
			mu.Lock()
			reached[r.Header.Get(gauntletMarker)] = true
			mu.Unlock()
		}
		fmt.Fprint(w, "reached")
	}), "localhost")
	port := egresstest.Port(srv)

	allow := []string{"localhost:" + port}
	var plays []egressPlay
	for _, c := range cases {
		p, err := egressPlan(c, port)
		require.NoError(t, err)
		p.Headers[gauntletMarker] = c.ID
		if p.allow != "" && !slices.Contains(allow, p.allow) {
			allow = append(allow, p.allow)
		}
		plays = append(plays, p)
	}
	ws, env := workspace(t)
	cfg := filepath.Join(filepath.Dir(ws), "toolwarden.yaml")
	quoted, _ := json.Marshal(allow)
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`exec:
  interpreters: [python]
  network:
    allow: %s
    credentials:
      - host: localhost
        header: X-Gauntlet-Token
        value_env: GAUNTLET_TOKEN
        placeholder: TOOLWARDEN_GAUNTLET
    upstream_ca_file: %s
    dlp:
      off: %t
`, quoted, ca.File, *gauntletDLPOff)), 0o600))
	env = append(env, "TOOLWARDEN_EXEC_BACKEND=bwrap", "GAUNTLET_TOKEN=gauntlet-brokered-value")
	c, err := client.NewStdioMCPClient(binary, env, append([]string{"serve", "--config", cfg, "--workspace", ws}, runScriptArgs...)...)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	initialize(t, c)

	answers := runPlayer(t, c, plays)
	results := map[string]benchResult{}
	for _, p := range plays {
		a, ok := answers[p.ID]
		require.True(t, ok, "%s: no answer", p.ID)
		ev := map[string]any{"played": p.how, "status": a.Status}
		actual := "error"
		switch {
		case a.Status == http.StatusForbidden && a.Rule != "":
			actual = "block"
			ev["rule"] = a.Rule
			if a.Finding != "" {
				ev["finding"] = a.Finding
			}
			mu.Lock()
			require.False(t, reached[p.ID], "%s: refused, yet its request reached the server whole", p.ID)
			mu.Unlock()
		case a.Status == http.StatusOK:
			actual = "allow"
			mu.Lock()
			require.True(t, reached[p.ID], "%s: allowed, yet the server did not see it", p.ID)
			mu.Unlock()
		case a.Status == http.StatusBadGateway && a.Rule == "egress.resolve":
			actual = "allow"
			ev["rule"] = a.Rule // passed every check; no DNS answers it here
		default:
			ev["answer"] = a.Body
		}
		results[p.ID] = benchResult{Actual: actual, Evidence: ev}
	}
	checkGauntletAudit(t, auditPathOf(t, env), results)
	return results
}

// runPlayer runs egressPlayer over plays in one run_script. The plays
// are given on stdin, reversed: in the arguments, the corpus's secrets would be
// refused by the argument scan before the sandbox starts; an attack
// reads them inside the sandbox, and the proxy is what is scored.
func runPlayer(t *testing.T, c *client.Client, plays []egressPlay) map[string]egressAnswer {
	t.Helper()
	arg, err := json.Marshal(plays)
	require.NoError(t, err)
	req := mcp.CallToolRequest{}
	req.Params.Name = "run_script"
	req.Params.Arguments = map[string]any{"interpreter": "python", "script": egressPlayer, "stdin": reverse(string(arg)), "timeout_seconds": 60}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := c.CallTool(ctx, req)
	require.NoError(t, err)
	text := res.Content[0].(mcp.TextContent).Text
	require.False(t, res.IsError, text)
	var run struct {
		Stdout, Stderr string
		ExitCode       int `json:"exit_code"`
	}
	require.NoError(t, json.Unmarshal([]byte(text), &run))
	require.Equal(t, 0, run.ExitCode, run.Stderr)
	var out map[string]egressAnswer
	require.NoError(t, json.Unmarshal([]byte(run.Stdout), &out), run.Stdout)
	return out
}

// checkGauntletAudit: every data-loss refusal is an egress_denied line
// naming egress.dlp and its finding in code, and no line holds one of
// the corpus's secrets.
func checkGauntletAudit(t *testing.T, path string, results map[string]benchResult) {
	t.Helper()
	want := 0
	for _, r := range results {
		if r.Evidence["rule"] == "egress.dlp" {
			want++
		}
	}
	var findings int
	var text string
	deadline := time.Now().Add(30 * time.Second)
	for {
		findings, text = 0, auditText(t, path)
		for _, l := range strings.Split(text, "\n") {
			var e map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &e))
			if e["outcome"] == "egress_denied" && e["rule"] == "egress.dlp" {
				require.NotEmpty(t, e["code"], "%s", l)
				findings++
			}
		}
		if findings >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.GreaterOrEqual(t, findings, want)
	for _, s := range []string{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef01", "4111111111111111"} {
		require.False(t, strings.Contains(text, s), "the audit holds a secret the corpus sent")
	}
}
