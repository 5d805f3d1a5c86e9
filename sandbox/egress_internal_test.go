package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNetEnvReplacesTheCallersProxySettings(t *testing.T) {
	env := netEnv([]string{"PATH=/usr/bin", "HTTPS_PROXY=http://elsewhere:1", "no_proxy=localhost,127.0.0.1", "SSL_CERT_FILE=/x"}, false)
	require.Contains(t, env, "PATH=/usr/bin")
	require.Contains(t, env, "HTTPS_PROXY=http://"+ProxyAddr)
	require.Contains(t, env, "no_proxy=", "loopback is not exempt: only the forwarder listens there")
	require.Contains(t, env, "SSL_CERT_FILE="+CABundle)
	require.NotContains(t, strings.Join(env, "\n"), "elsewhere")
	require.NotContains(t, strings.Join(env, "\n"), "NODE_EXTRA_CA_CERTS", "no extra CA, no extra file")
}

// Only a run with a Network lets gVisor reach a host socket, or mounts
// anything of it.
func TestRunscHostSocketsOnlyWithNetwork(t *testing.T) {
	r := &Runsc{Path: "/usr/bin/runsc", Platform: "systrap", StateDir: t.TempDir(), root: &rootfs{dir: "/state/rootfs-x"}}
	for _, network := range []bool{false, true} {
		runDir := t.TempDir()
		req := Request{Argv: []string{"/usr/bin/true"}, Limits: DefaultLimits}
		if network {
			req.Network = &Network{Serve: func(net.Listener) {}}
			req.netMounts = []bindMount{{"/state/net", NetDir}}
		}
		ln, err := r.command("tw-1-a", runDir, "/state/files", req, nil)
		require.NoError(t, err)
		require.Equal(t, network, strings.Contains(strings.Join(ln.argv, " "), "--host-uds=open"))
		spec, err := os.ReadFile(filepath.Join(runDir, "bundle", "config.json"))
		require.NoError(t, err)
		require.Equal(t, network, strings.Contains(string(spec), NetDir))
	}
}

// A run directory deeper than a socket address holds still gets its
// socket, open to the sandbox's user.
func TestListenUnixLongPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	ln, err := listenUnix(dir, proxySocketName)
	require.NoError(t, err)
	defer ln.Close()
	fi, err := os.Stat(filepath.Join(dir, proxySocketName))
	require.NoError(t, err)
	require.Equal(t, os.ModeSocket, fi.Mode().Type())
	require.Equal(t, os.FileMode(0o666), fi.Mode().Perm())
	d, err := os.Open(dir)
	require.NoError(t, err)
	defer d.Close()
	c, err := net.Dial("unix", filepath.Join("/proc/self/fd", strconv.Itoa(int(d.Fd())), proxySocketName))
	require.NoError(t, err)
	c.Close()
}
