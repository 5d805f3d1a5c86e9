package egress_test

import (
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/egress"
	"github.com/toolwarden/toolwarden/egress/egresstest"
)

const (
	realToken   = "Bearer ghp_real-secret-0123456789"
	placeholder = "TOOLWARDEN_GITHUB"
)

// brokerRig is a proxy brokering a credential for api.test, a local
// HTTPS server of a test CA that records what it receives.
type brokerRig struct {
	*rig
	port string
	// other is a second allowed, not brokered, server.
	otherPort string

	mu   sync.Mutex
	seen []http.Header
	body []string
}

func newBrokerRig(t *testing.T) *brokerRig {
	ca := egresstest.NewCA(t)
	b := &brokerRig{}
	record := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		b.mu.Lock()
		b.seen = append(b.seen, r.Header.Clone())
		b.body = append(b.body, string(data))
		b.mu.Unlock()
		if r.URL.Path == "/echo" {
			fmt.Fprint(w, "you sent: ", r.Header.Get("Authorization"))
			return
		}
		if r.URL.Path == "/echo-header" {
			w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		}
		fmt.Fprint(w, "ok")
	})
	b.port = egresstest.Port(ca.Server(t, record, "api.test"))
	b.otherPort = egresstest.Port(ca.Server(t, record, "other.test"))
	b.rig = newRig(t, rigOpts{
		net: configs.Network{
			Allow: []string{"api.test:" + b.port, "other.test:" + b.otherPort},
			Credentials: []configs.Credential{{Host: "api.test", Header: "Authorization",
				ValueEnv: "GITHUB_TOKEN", Placeholder: placeholder}},
			UpstreamCAFile: ca.File,
		},
		resolver: egresstest.Resolver{"api.test": {"127.0.0.1"}, "other.test": {"127.0.0.1"}},
		env:      map[string]string{"GITHUB_TOKEN": realToken},
	})
	return b
}

func (b *brokerRig) sandboxClient() *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(b.proxy.CAPEM())
	return b.client(pool)
}

// TestBrokerInjectsCredential: the sandbox sends the placeholder, the
// server receives the real value, and the sandbox trusts only the
// ephemeral CA, which proves the proxy terminated TLS for this host.
func TestBrokerInjectsCredential(t *testing.T) {
	b := newBrokerRig(t)
	req, _ := http.NewRequest("GET", "https://api.test:"+b.port+"/repos", nil)
	req.Header.Set("Authorization", placeholder)
	resp, err := b.sandboxClient().Do(req)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "ok", body(t, resp))
	require.Equal(t, realToken, b.seen[0].Get("Authorization"))

	ev := b.waitEvents(t, 1)[0]
	require.True(t, ev.Allowed, "%+v", ev)
	require.True(t, ev.CredentialInjected)
	require.NotContains(t, fmt.Sprintf("%+v %#v", ev, ev), "real-secret")

	t.Run("a client trusting the real CA only refuses the interception", func(t *testing.T) {
		_, err := b.client(x509.NewCertPool()).Get("https://api.test:" + b.port + "/")
		require.ErrorContains(t, err, "certificate")
	})
}

// TestBrokerRefusesPlaceholderElsewhere: the placeholder in any other
// header, the URL, the body, to another host or over plain http is
// refused and never reaches a server; the value never reaches the
// sandbox, even when the server sends it back.
func TestBrokerRefusesPlaceholderElsewhere(t *testing.T) {
	b := newBrokerRig(t)
	c := b.sandboxClient()
	const rule = "exec.network.credentials[0]"
	tests := []struct {
		name   string
		req    func() *http.Request
		reason string
	}{
		{"other header", func() *http.Request {
			r, _ := http.NewRequest("GET", "https://api.test:"+b.port+"/", nil)
			r.Header.Set("X-Forward", "see "+placeholder)
			return r
		}, "may only be sent in the Authorization header to api.test"},
		{"query", func() *http.Request {
			r, _ := http.NewRequest("GET", "https://api.test:"+b.port+"/?t="+placeholder, nil)
			return r
		}, "may only be sent"},
		{"percent-encoded path", func() *http.Request {
			r, _ := http.NewRequest("GET", "https://api.test:"+b.port+"/%54OOLWARDEN_GITHUB", nil)
			return r
		}, "may only be sent"},
		{"body", func() *http.Request {
			r, _ := http.NewRequest("POST", "https://api.test:"+b.port+"/", strings.NewReader(strings.Repeat("x", 40000)+placeholder))
			return r
		}, "in the request body"},
		{"plain http to the brokered host", func() *http.Request {
			r, _ := http.NewRequest("GET", "http://api.test:"+b.port+"/", nil)
			r.Header.Set("Authorization", placeholder)
			return r
		}, "sent over TLS only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.Do(tt.req())
			require.NoError(t, err)
			require.Equal(t, http.StatusForbidden, resp.StatusCode)
			got := body(t, resp)
			require.Contains(t, got, tt.reason)
			require.Contains(t, got, "("+rule+")")
		})
	}
	t.Run("plain http to another host", func(t *testing.T) {
		_, _, resp := b.raw(t, "GET http://other.test:"+b.otherPort+"/ HTTP/1.1\r\nHost: other.test:"+b.otherPort+"\r\nAuthorization: "+placeholder+"\r\n\r\n")
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
		require.Contains(t, body(t, resp), "("+rule+")")
	})
	b.mu.Lock()
	// The body case starts its request before the placeholder is read;
	// the stream is cut before it, so the server has a truncated body.
	require.LessOrEqual(t, len(b.seen), 1, "no other refused request reached a server")
	for i, h := range b.seen {
		require.NotContains(t, fmt.Sprint(h)+b.body[i], placeholder)
		require.Less(t, len(b.body[i]), 40000+len(placeholder))
	}
	b.mu.Unlock()

	t.Run("the value echoed in the body is cut before it", func(t *testing.T) {
		req, _ := http.NewRequest("GET", "https://api.test:"+b.port+"/echo", nil)
		req.Header.Set("Authorization", placeholder)
		resp, err := c.Do(req)
		if err == nil {
			got, _ := io.ReadAll(resp.Body)
			require.NotContains(t, string(got), "real-secret")
		}
	})
	t.Run("the value echoed in a header is refused", func(t *testing.T) {
		req, _ := http.NewRequest("GET", "https://api.test:"+b.port+"/echo-header", nil)
		req.Header.Set("Authorization", placeholder)
		resp, err := c.Do(req)
		require.NoError(t, err)
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
		got := body(t, resp)
		require.NotContains(t, got, "real-secret")
		require.Contains(t, got, "the response carries the credential's value")
	})
	for _, ev := range b.waitEvents(t, 8) {
		require.NotContains(t, fmt.Sprintf("%+v", ev), "real-secret")
	}
}

// TestNotBrokeredIsUntouched: an allowed host without credentials is
// tunnelled end to end: the sandbox must trust the server's own CA, and
// the placeholder it sends there is not replaced.
func TestNotBrokeredIsUntouched(t *testing.T) {
	b := newBrokerRig(t)
	_, err := b.sandboxClient().Get("https://other.test:" + b.otherPort + "/")
	require.ErrorContains(t, err, "certificate", "the ephemeral CA signs brokered hosts only")
	ev := b.waitEvents(t, 1)[0]
	require.False(t, ev.CredentialInjected)
}

// TestPolicyNeedsTheValue: a credential whose value is missing, unfit
// for a header, or in a file others may read stops the policy, naming the
// key and never a value. A FIFO is refused at once, not waited on.
func TestPolicyNeedsTheValue(t *testing.T) {
	dir := t.TempDir()
	private := writeValue(t, dir, "private", realToken+"\n", 0o600)
	open := writeValue(t, dir, "open", realToken+"\n", 0o644)
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	fromEnv := configs.Credential{Host: "api.test", Header: "Authorization", ValueEnv: "GITHUB_TOKEN", Placeholder: placeholder}
	fromFile := func(path string) configs.Credential {
		c := fromEnv
		c.ValueEnv, c.ValueFile = "", path
		return c
	}
	tests := []struct {
		name, key, env string
		cred           configs.Credential
		want           string // "" when the policy compiles
	}{
		{"unset variable", "upstreams[0].network", "", fromEnv,
			"upstreams[0].network.credentials[0].value_env: the variable GITHUB_TOKEN is not set"},
		{"line break in the variable", "exec.network", "a\r\nX-Injected: 1", fromEnv,
			"exec.network.credentials[0]: the value is empty or holds a line break"},
		{"private file", "exec.network", "", fromFile(private), ""},
		{"file others may read", "exec.network", "", fromFile(open),
			"exec.network.credentials[0].value_file: " + open + " has mode 0644: a secret file must be 0600 or stricter"},
		{"FIFO", "tools[1].network", "", fromFile(fifo),
			"tools[1].network.credentials[0].value_file: " + fifo + " is not a regular file"},
		{"missing file", "exec.network", "", fromFile(filepath.Join(dir, "none")),
			"exec.network.credentials[0].value_file: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := configs.Network{Allow: []string{"api.test:443"}, Credentials: []configs.Credential{tt.cred}}
			done := make(chan error, 1)
			go func() {
				_, err := egress.NewPolicy(tt.key, n, func(string) string { return tt.env })
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Fatal("NewPolicy blocked reading the value")
			}
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.want)
			require.NotContains(t, err.Error(), "X-Injected")
			require.NotContains(t, err.Error(), "real-secret")
		})
	}
}

func writeValue(t *testing.T, dir, name, value string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(value), mode))
	require.NoError(t, os.Chmod(p, mode)) // past the umask
	return p
}
