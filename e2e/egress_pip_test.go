package e2e

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/egress/egresstest"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// pipDownload runs in the sandbox: pip downloads one project from the
// index given, trusting the index's CA beside the sandbox's roots, and
// prints the sha256 of each file that arrived, or "NO_PIP" when the
// sandbox's python has no pip. The CA goes into a copy of the sandbox's
// bundle named by REQUESTS_CA_BUNDLE: a network run sets that variable,
// and pip's requests lets it override --cert.
const pipDownload = `
import hashlib, importlib.util, os, subprocess, sys
index, project, ca = sys.argv[1], sys.argv[2], sys.argv[3]
if importlib.util.find_spec("pip") is None:
    print("NO_PIP")
    sys.exit(0)
bundle = "/tmp/bundle.pem"
open(bundle, "w").write(open(os.environ["REQUESTS_CA_BUNDLE"]).read() + "\n" + ca)
env = dict(os.environ, REQUESTS_CA_BUNDLE=bundle, PIP_CERT=bundle)
out = "/tmp/pip-download"
p = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir", "--disable-pip-version-check",
                    "-vv", "--retries", "0", "--timeout", "30", "--index-url", index, project, "-d", out],
                   capture_output=True, text=True, env=env)
print("EXIT %d" % p.returncode)
for f in sorted(os.listdir(out)) if os.path.isdir(out) else []:
    print("FILE %s %s" % (f, hashlib.sha256(open(os.path.join(out, f), "rb").read()).hexdigest()))
print("OUTPUT " + (p.stdout + p.stderr).replace("\n", " | "))
`

// TestEgressPipDownload is the everyday use of exec.network: a script
// runs `pip download` from a package index (PEP 503, over HTTPS on a
// local port) that the allow list names, and the wheel arrives, byte for
// byte; the same index on a port the allow list does not name is
// refused with the rule. The index is tunnelled end to end (it has no
// credential), so pip verifies it against the index's own CA, as it
// would a company index. For runsc and bwrap, as root.
func TestEgressPipDownload(t *testing.T) {
	testenv.Root(t)
	if err := exec.Command("/usr/bin/python3", "-m", "pip", "--version").Run(); err != nil {
		t.Skipf("no pip for /usr/bin/python3 on this host (the sandbox's python): %v", err)
	}
	const project, version = "toolwarden-egress-demo", "1.0"
	wheel, wheelName := demoWheel(t, project, version)
	sum := sha256.Sum256(wheel)
	ca := egresstest.NewCA(t)
	index := func() string {
		return egresstest.Port(ca.Server(t, pipIndex(project, wheelName, wheel), "localhost"))
	}
	allowed, other := index(), index()

	for _, backend := range []string{"runsc", "bwrap"} {
		t.Run(backend, func(t *testing.T) {
			ws, env := workspace(t)
			cfg := filepath.Join(filepath.Dir(ws), "toolwarden.yaml")
			require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`exec:
  interpreters: [python]
  network:
    allow: ["localhost:%s"]
`, allowed)), 0o600))
			env = append(env, "TOOLWARDEN_EXEC_BACKEND="+backend)
			c, err := client.NewStdioMCPClient(binary, env, append([]string{"serve", "--config", cfg, "--workspace", ws}, runScriptArgs...)...)
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })
			initialize(t, c)

			pip := func(port string) string {
				out, _ := runPython(t, c, pipDownload, []string{"https://localhost:" + port + "/simple/", project, string(ca.PEM)}, 60)
				if strings.TrimSpace(out) == "NO_PIP" {
					t.Skip("the sandbox's python has no pip module")
				}
				return out
			}
			got := pip(allowed)
			require.Contains(t, got, "EXIT 0\n", got)
			require.Contains(t, got, "FILE "+wheelName+" "+hex.EncodeToString(sum[:])+"\n", "the wheel arrived whole: %s", got)

			refused := pip(other)
			require.NotContains(t, refused, "EXIT 0\n", refused)
			require.NotContains(t, refused, "FILE ", "nothing arrived from the index not allowed")
			require.Contains(t, refused, "Tunnel connection failed: 403", refused)

			text := auditText(t, auditPathOf(t, env))
			requireEgressLine(t, text, "egress_allowed", allowed, "exec.network.allow")
			requireEgressLine(t, text, "egress_denied", other, "exec.network.allow")
		})
	}
}

// requireEgressLine requires an audit line with that outcome, port of
// localhost and rule.
func requireEgressLine(t *testing.T, text, outcome, port, rule string) {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, `"outcome":"`+outcome+`"`) && strings.Contains(l, `"host":"localhost"`) &&
			strings.Contains(l, `"port":`+port+`,`) && strings.Contains(l, `"rule":"`+rule+`"`) {
			return
		}
	}
	t.Fatalf("no %s line for localhost:%s by %s in:\n%s", outcome, port, rule, text)
}

// pipIndex serves a PEP 503 simple index of one project with one wheel.
func pipIndex(project, wheelName string, wheel []byte) http.Handler {
	sum := sha256.Sum256(wheel)
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/simple/":
			fmt.Fprintf(w, "<!DOCTYPE html><html><body><a href=\"%s/\">%s</a></body></html>\n", project, project)
		case "/simple/" + project + "/":
			fmt.Fprintf(w, "<!DOCTYPE html><html><body><a href=\"../../files/%s#sha256=%x\">%s</a></body></html>\n", wheelName, sum, wheelName)
		default:
			http.NotFound(w, r)
		}
	})
	mux.HandleFunc("/files/"+wheelName, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(wheel)
	})
	return mux
}

// demoWheel builds a minimal pure-python wheel (PEP 427) of project:
// one module, METADATA, WHEEL and a RECORD of their digests.
func demoWheel(t *testing.T, project, version string) ([]byte, string) {
	t.Helper()
	dist := strings.ReplaceAll(project, "-", "_")
	info := dist + "-" + version + ".dist-info/"
	files := []struct{ name, body string }{
		{dist + "/__init__.py", "GREETING = \"hello through the egress proxy\"\n"},
		{info + "METADATA", "Metadata-Version: 2.1\nName: " + project + "\nVersion: " + version + "\nSummary: toolwarden e2e demo\n"},
		{info + "WHEEL", "Wheel-Version: 1.0\nGenerator: toolwarden-e2e\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record strings.Builder
	for _, f := range files {
		w, err := zw.Create(f.name)
		require.NoError(t, err)
		_, err = w.Write([]byte(f.body))
		require.NoError(t, err)
		d := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(d[:]), len(f.body))
	}
	record.WriteString(info + "RECORD,,\n")
	w, err := zw.Create(info + "RECORD")
	require.NoError(t, err)
	_, err = w.Write([]byte(record.String()))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes(), dist + "-" + version + "-py3-none-any.whl"
}
