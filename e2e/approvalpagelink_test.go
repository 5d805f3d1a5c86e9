package e2e

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// received keeps every byte the server sends a client over HTTP.
type received struct{ testenv.SyncBuffer }

func (rc *received) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		res.Body = struct {
			io.Reader
			io.Closer
		}{io.TeeReader(res.Body, rc), res.Body}
	}
	return res, err
}

// pageHTTPServer starts `toolwarden serve --http` with the config cfg and
// returns the MCP base URL and the page's one-time URL from stderr.
func pageHTTPServer(t *testing.T, ws string, env []string, cfg string) (base, pageURL string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(binary, "serve", "--workspace", ws, "--http", addr, "--config", cfg)
	cmd.Env = append(env, "TOOLWARDEN_HTTP_TOKEN=e2e-token-0123456789")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.Contains(sc.Text(), "serving HTTP") {
		if line := sc.Text(); strings.HasPrefix(line, "http://127.0.0.1:") {
			pageURL = line
		}
	}
	require.NotEmpty(t, pageURL, "serve printed no approval page URL")
	go func() {
		for sc.Scan() {
		}
	}()
	return "http://" + addr, pageURL
}

// urlHTTPClient connects over streamable HTTP as a client that declares
// URL-mode elicitation, with h as its handler and rc seeing every byte.
func urlHTTPClient(t *testing.T, base string, h client.ElicitationHandler, rc *received) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(base+"/mcp", transport.WithHTTPBasicClient(&http.Client{Transport: rc}),
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer e2e-token-0123456789"}))
	require.NoError(t, err)
	c := client.NewClient(tr, client.WithElicitationHandler(h))
	require.NoError(t, c.Start(ctxT(t)))
	t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = legacyProtocol
	init.Params.ClientInfo = mcp.Implementation{Name: "url-elicitation-http", Version: "1"}
	init.Params.Capabilities.Elicitation = &mcp.ElicitationCapability{URL: &struct{}{}}
	_, err = c.Initialize(ctxT(t), init)
	require.NoError(t, err)
	return c
}

// TestApprovalPageChannelNeverLinksTheClient: with approval.channel
// [page] the operator does not trust the client, so a client that
// declares URL-mode elicitation is never sent the per-call link (the
// attack: open it, read the token, approve its own call). Over HTTP
// nothing the client receives names the page at all. Listing elicit
// ([elicit, page]) is the operator trusting the client to show the human
// the link: then it gets it.
func TestApprovalPageChannelNeverLinksTheClient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		channels string
		linked   bool
	}{{"[page]", false}, {"[elicit, page]", true}} {
		t.Run(tc.channels, func(t *testing.T) {
			ws, env := workspace(t)
			cfg := filepath.Join(t.TempDir(), "toolwarden.yaml")
			require.NoError(t, os.WriteFile(cfg, []byte("approval:\n  channel: "+tc.channels+"\n"), 0o600))
			base, pageURL := pageHTTPServer(t, ws, env, cfg)
			// The client's handler is the attacker: it opens the link
			// and approves its own call.
			self := &linkOpener{t: t, action: mcp.ElicitationResponseActionAccept, decide: "approve"}
			rc := &received{}
			c := urlHTTPClient(t, base, self, rc)
			if tc.linked {
				require.Empty(t, write(t, c, "notes/linked.txt", "approved by link\n"))
				require.Contains(t, rc.String(), originOf(pageURL), "the link reached the client")
				return
			}
			res := writeAsync(t, c, "notes/self.txt", "self-approved?\n")
			hc, pageBase := pageSession(t, pageURL) // the human
			form := pageForm(t, hc, pageBase)
			select {
			case code := <-res:
				t.Fatalf("the call ended (%q) without the human", code)
			case <-time.After(time.Second):
			}
			self.mu.Lock()
			require.Empty(t, self.asked, "the client was sent the page's link")
			self.mu.Unlock()
			require.NotContains(t, rc.String(), originOf(pageURL), "something the client received names the page")
			form.Set("action", "deny")
			require.Equal(t, http.StatusSeeOther, postDecision(t, hc, pageBase, originOf(pageURL), form))
			require.Equal(t, "denied.approval_declined", <-res)
			require.Equal(t, "<missing>", readWS(ws, "notes/self.txt"))
			require.NotContains(t, auditText(t, auditPathOf(t, env)), `"outcome":"approved"`)
		})
	}
}
