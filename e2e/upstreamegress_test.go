package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/egress/egresstest"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// TestUpstreamEgress: a sandboxed upstream with a network block reaches
// its allowlisted host through the egress proxy, holding only the
// placeholder while the host receives the real credential; another host
// is refused; the connections are audit lines of the upstream's own
// identity, never holding the value. For runsc and bwrap.
func TestUpstreamEgress(t *testing.T) {
	testenv.Root(t)
	bin, dir := sandboxedHostile(t)
	ca := egresstest.NewCA(t)
	const token = "real-upstream-credential-8d1e4b"
	var mu sync.Mutex
	var got []string
	srv := ca.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "no credential", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, "hello upstream")
	}), "localhost")
	port := egresstest.Port(srv)
	for _, backend := range upstreamBackends {
		t.Run(backend, func(t *testing.T) {
			ws, env := workspace(t)
			env = append(env, "TOOLWARDEN_EXEC_BACKEND="+backend, "EGRESS_TEST_TOKEN="+token)
			file := upstreamConfig(t, ws, fmt.Sprintf(`
policy:
  allow: [hostile__fetch]
upstreams:
  - name: hostile
    command: [%s, --attack]
    mounts: [%s]
    network:
      allow: ["localhost:%s"]
      credentials:
        - host: localhost
          header: Authorization
          value_env: EGRESS_TEST_TOKEN
          placeholder: TOOLWARDEN_UPSTREAM_TEST
      upstream_ca_file: %s
`, bin, dir, port, ca.File))
			c, names := serveUpstream(t, ws, env, file)
			require.Equal(t, []string{"hostile__fetch"}, names)

			res := callUpstream(t, c, "hostile__fetch", map[string]any{"url": "https://localhost:" + port + "/"})
			require.False(t, res.IsError, "%+v", res.Content)
			require.Equal(t, "REACHED 200 hello upstream", res.Content[0].(mcp.TextContent).Text)
			mu.Lock()
			require.Contains(t, got, "Bearer "+token, "the host received the real value")
			mu.Unlock()

			res = callUpstream(t, c, "hostile__fetch", map[string]any{"url": "https://localhost:1/"})
			text := res.Content[0].(mcp.TextContent).Text
			// Go's client reports a refused CONNECT by its status text.
			require.True(t, strings.HasPrefix(text, "REFUSED") && strings.Contains(text, "Forbidden"), text)

			// A connection's line is written when it has closed, each on
			// its own: wait for both.
			var log string
			require.Eventually(t, func() bool {
				log = auditText(t, auditPathOf(t, env))
				return strings.Contains(log, `"outcome":"egress_allowed"`) && strings.Contains(log, `"outcome":"egress_denied"`)
			}, time.Minute, 100*time.Millisecond, "no egress_allowed and egress_denied lines")
			require.Contains(t, log, `"identity":"upstream:hostile"`)
			require.Contains(t, log, `"credential_injected":true`)
			require.NotContains(t, log, token, "the audit log never holds the value")
		})
	}
}
