package testenv

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// HTTPRefusal is one request the HTTP transports must refuse before the
// server behind them sees it, or, for the own-origin cases, let through:
// a path, the headers, a body (none: a GET) and the status to expect.
type HTTPRefusal struct {
	Name   string
	Path   string
	Hdr    map[string]string
	Body   string
	Status int
}

// HTTPRefusals is the table of such requests against a server at url that
// takes the bearer token; initBody is its initialize request. The
// transport's own tests and the guarded server's tests both run it.
func HTTPRefusals(url, token, initBody string) []HTTPRefusal {
	auth := "Bearer " + token
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	port := url[strings.LastIndex(url, ":")+1:]
	with := func(k, v string) map[string]string { return map[string]string{"Authorization": auth, k: v} }
	return []HTTPRefusal{
		{"no token", "/mcp", nil, initBody, http.StatusUnauthorized},
		{"wrong token", "/mcp", map[string]string{"Authorization": "Bearer nope-nope-nope-nope"}, initBody, http.StatusUnauthorized},
		{"token prefix only", "/mcp", map[string]string{"Authorization": "Bearer " + token[:10]}, initBody, http.StatusUnauthorized},
		{"no token on sse", "/sse", nil, "", http.StatusUnauthorized},
		{"foreign origin", "/mcp", with("Origin", "https://evil.example"), initBody, http.StatusForbidden},
		{"null origin", "/mcp", with("Origin", "null"), initBody, http.StatusForbidden},
		{"foreign origin on sse message", "/message?sessionId=x", with("Origin", "https://evil.example"), initBody, http.StatusForbidden},
		{"rebinding host", "/mcp", with("Host", "evil.example:8080"), initBody, http.StatusForbidden},
		{"body too large", "/mcp", map[string]string{"Authorization": auth}, `{"x":"` + strings.Repeat("a", 70<<10) + `"}`, http.StatusRequestEntityTooLarge},
		{"invented session id", "/mcp", with("Mcp-Session-Id", "tw-"+strings.Repeat("ab", 32)), list, http.StatusNotFound},
		{"mcp-go style session id", "/mcp", with("Mcp-Session-Id", "mcp-session-0b1e4f2c-2f6e-4c1a-9d57-3c2d1a0e9f11"), list, http.StatusNotFound},
		{"forged sse session", "/message?sessionId=0b1e4f2c-2f6e-4c1a-9d57-3c2d1a0e9f11", map[string]string{"Authorization": auth}, list, http.StatusNotFound},
		{"loopback origin of another port", "/mcp", with("Origin", "http://localhost:1"), initBody, http.StatusForbidden},
		{"loopback origin without port", "/mcp", with("Origin", "http://127.0.0.1"), initBody, http.StatusForbidden},
		{"rebound name on our port", "/mcp", with("Origin", "http://evil.example:"+port), initBody, http.StatusForbidden},
		{"loopback origin with a path", "/mcp", with("Origin", "http://localhost:"+port+"/x"), initBody, http.StatusForbidden},
		{"own origin on localhost", "/mcp", with("Origin", "http://localhost:"+port), initBody, http.StatusOK},
		{"own origin on 127.0.0.1", "/mcp", with("Origin", "http://127.0.0.1:"+port), initBody, http.StatusOK},
		{"own origin on [::1]", "/mcp", with("Origin", "http://[::1]:"+port), initBody, http.StatusOK},
	}
}

// Send makes the request against url and returns the status and the
// first 4 KiB of the body.
func (r HTTPRefusal) Send(t testing.TB, url string) (int, string) {
	t.Helper()
	var res *http.Response
	if r.Body == "" {
		req, err := http.NewRequest(http.MethodGet, url+r.Path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res, err = http.DefaultClient.Do(req); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
	} else {
		res = PostMCP(t, url+r.Path, r.Hdr, r.Body)
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	return res.StatusCode, string(body)
}
