package sandbox_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/sandbox"
)

// attackScript tries to take the proxy's place or tamper with what the
// run trusts: every line must end "refused".
const attackScript = `
d=` + sandbox.NetDir + `
try() { if ( eval "$2" ) >/dev/null 2>&1; then echo "$1 DONE"; else echo "$1 refused"; fi; }
try "write the CA" "echo x >> $d/ca.pem"
try "write the bundle" "echo x >> ` + sandbox.CABundle + `"
try "add a root" "echo x > /etc/ssl/certs/evil.pem"
try "write the forwarder" "echo x >> $d/toolwarden-forward"
try "replace the socket" "rm -f $d/proxy.sock"
try "add a file" "touch $d/evil"
try "move the socket" "mv $d/proxy.sock $d/x"
echo sockets $(find / -path /proc -prune -o -type s -print 2>/dev/null | sort | tr '\n' ' ')
`

// TestEgressAttackNetDir: a program in a Network run can neither change
// the trust store, the forwarder or the socket, nor see a host socket
// other than the proxy's (the binds of this host show none).
func TestEgressAttackNetDir(t *testing.T) {
	for _, r := range runners(t) {
		t.Run(r.Name(), func(t *testing.T) {
			p := newTestProxy(t)
			// find walks the whole root (the host's /usr among it): under
			// gVisor on a loaded machine that outlasts the default 20 s.
			res := run(t, r, sandbox.Request{Argv: bash(attackScript), Network: p.network(),
				Limits: sandbox.Limits{Timeout: 3 * time.Minute}})
			require.Equal(t, 0, res.ExitCode, string(res.Stderr))
			out := string(res.Stdout)
			require.NotContains(t, out, "DONE", out)
			require.Equal(t, 7, strings.Count(out, "refused"), out)
			require.Contains(t, out, "sockets "+sandbox.NetDir+"/proxy.sock\n", out)
		})
	}
}
