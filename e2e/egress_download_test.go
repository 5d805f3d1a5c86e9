package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/egress/egresstest"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// egressDownload fetches a URL through the proxy, trusting the CA given,
// and prints the body's size and sha256.
const egressDownload = `
import hashlib, ssl, sys, urllib.request
url, ca = sys.argv[1], sys.argv[2]
opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ssl.create_default_context(cadata=ca)))
h, n = hashlib.sha256(), 0
with opener.open(url, timeout=50) as r:
    while True:
        b = r.read(1 << 20)
        if not b:
            break
        h.update(b)
        n += len(b)
print(n, h.hexdigest())
`

// TestEgressDownloadIntact: a large download through the whole path
// (the sandbox's forwarder, the proxy, a local HTTPS server) arrives
// byte for byte, under runsc and bwrap: TLS would refuse any corrupted
// record, so a relay that reorders or loses bytes fails the run.
func TestEgressDownloadIntact(t *testing.T) {
	testenv.Root(t)
	body := make([]byte, 48<<20)
	r := rand.NewChaCha8([32]byte{1})
	_, _ = r.Read(body)
	sum := sha256.Sum256(body)
	ca := egresstest.NewCA(t)
	port := egresstest.Port(ca.Server(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}), "localhost"))

	for _, backend := range []string{"runsc", "bwrap"} {
		t.Run(backend, func(t *testing.T) {
			ws, env := workspace(t)
			cfg := filepath.Join(filepath.Dir(ws), "toolwarden.yaml")
			require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf("exec:\n  interpreters: [python]\n  network:\n    allow: [\"localhost:%s\"]\n", port)), 0o600))
			env = append(env, "TOOLWARDEN_EXEC_BACKEND="+backend)
			c, err := client.NewStdioMCPClient(binary, env, append([]string{"serve", "--config", cfg, "--workspace", ws}, runScriptArgs...)...)
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })
			initialize(t, c)
			out, _ := runPython(t, c, egressDownload, []string{"https://localhost:" + port + "/", string(ca.PEM)}, 60)
			require.Equal(t, fmt.Sprintf("%d %s", len(body), hex.EncodeToString(sum[:])), strings.TrimSpace(out))
		})
	}
}
