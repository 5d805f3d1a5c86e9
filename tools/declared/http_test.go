package declared

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/structured"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
)

const apiKey = "sk-test-SECRET-0123456789abcdef"

// seen records what the endpoint received.
type seen struct {
	header http.Header
	query  string
	body   string
}

// endpoint serves /ok, /echo (which echoes the secret back), /big, /fail,
// /moved (same host) and /away (another host).
func endpoint(t *testing.T, other string, got *seen) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		*got = seen{header: r.Header.Clone(), query: r.URL.RawQuery, body: string(b)}
		switch r.URL.Path {
		case "/ok":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"results":["a","b"]}`))
		case "/echo":
			k := r.Header.Get("X-Api-Key")
			_, _ = w.Write([]byte("you sent " + k + " " + url.QueryEscape(k+"/") + " " + base64.StdEncoding.EncodeToString([]byte(k))))
		case "/big":
			_, _ = w.Write([]byte(strings.Repeat("x", 5000)))
		case "/fail":
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte("slow down, key " + r.Header.Get("X-Api-Key")))
		case "/moved":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/away":
			http.Redirect(w, r, other+"/steal", http.StatusFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func httpDecl(base, path string) configs.DeclaredTool {
	return configs.DeclaredTool{
		Name: "search_api", Description: "Search.", Type: configs.ToolHTTP, Method: "GET",
		BaseURL: base + path + "?fixed=1", APIKeyEnv: "SEARCH_KEY", APIKeyHeader: "X-Api-Key",
		MaxOutputBytes: 1000,
		Params:         []configs.ToolParam{{Name: "q", Type: configs.ParamString, Required: true}, {Name: "n", Type: configs.ParamInteger}},
	}
}

func getenv(k string) string {
	if k == "SEARCH_KEY" {
		return apiKey
	}
	return ""
}

func call(t *testing.T, tool tools.Tool, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool.Tool.Name
	req.Params.Arguments = args
	res, err := tool.Handler(context.Background(), req)
	require.NoError(t, err)
	return res
}

func resultText(res *mcp.CallToolResult) string {
	b, _ := json.Marshal(res)
	return string(b)
}

func TestHTTPToolSendsTheSecretAndNeverShowsIt(t *testing.T) {
	var got, stolen seen
	other := endpoint(t, "", &stolen)
	srv := endpoint(t, other.URL, &got)
	h := HTTP{Getenv: getenv}

	res := call(t, h.Tool(httpDecl(srv.URL, "/ok")), map[string]any{"q": "golang; rm -rf /", "n": float64(3)})
	require.False(t, res.IsError, resultText(res))
	var out HTTPOut
	require.NoError(t, json.Unmarshal(structuredJSON(t, res), &out))
	require.Equal(t, HTTPOut{Status: 200, ContentType: "application/json", Body: `{"results":["a","b"]}`}, out)
	require.Equal(t, apiKey, got.header.Get("X-Api-Key"), "the secret is on the wire")
	require.Equal(t, "fixed=1&n=3&q=golang%3B+rm+-rf+%2F", got.query, "params are query values, encoded")

	for name, path := range map[string]string{"echoed in body": "/echo", "echoed in error": "/fail"} {
		t.Run(name, func(t *testing.T) {
			res := call(t, h.Tool(httpDecl(srv.URL, path)), map[string]any{"q": "x"})
			require.Equal(t, apiKey, got.header.Get("X-Api-Key"))
			require.NotContains(t, resultText(res), apiKey)
			require.NotContains(t, resultText(res), base64.StdEncoding.EncodeToString([]byte(apiKey)))
			require.Contains(t, resultText(res), redacted)
		})
	}
}

func TestHTTPToolErrors(t *testing.T) {
	var got, stolen seen
	other := endpoint(t, "", &stolen)
	srv := endpoint(t, other.URL, &got)
	h := HTTP{Getenv: getenv}

	res := call(t, h.Tool(httpDecl(srv.URL, "/fail")), map[string]any{"q": "x"})
	e := errorOf(t, res)
	require.Equal(t, toolerr.UpstreamStatus, e.Code)
	require.Contains(t, e.Message, "429 Too Many Requests")
	require.Equal(t, "tools.search_api.status", e.Rule)

	res = call(t, h.Tool(httpDecl(srv.URL, "/away")), map[string]any{"q": "x"})
	e = errorOf(t, res)
	require.Equal(t, toolerr.DeniedNotAllowed, e.Code)
	require.Equal(t, "tools.search_api.base_url.same_host", e.Rule)
	require.Empty(t, stolen.header, "the other host was never contacted")
	require.NotContains(t, resultText(res), apiKey)

	res = call(t, h.Tool(httpDecl(srv.URL, "/moved")), map[string]any{"q": "x"})
	require.False(t, res.IsError, "a redirect on the same host is followed: %s", resultText(res))

	res = call(t, h.Tool(httpDecl(srv.URL, "/big")), map[string]any{"q": "x"})
	var out HTTPOut
	require.NoError(t, json.Unmarshal(structuredJSON(t, res), &out))
	require.True(t, out.Truncated)
	require.Len(t, out.Body, 1000)

	res = call(t, HTTP{Getenv: func(string) string { return "" }}.Tool(httpDecl(srv.URL, "/ok")), map[string]any{"q": "x"})
	require.Equal(t, toolerr.BackendUnavailable, errorOf(t, res).Code, "an unset credential fails the call, naming no value")

	srv.Close()
	res = call(t, h.Tool(httpDecl(srv.URL, "/ok")), map[string]any{"q": "x"})
	require.Equal(t, toolerr.BackendUnavailable, errorOf(t, res).Code)
}

func TestHTTPToolIgnoresProxyEnv(t *testing.T) {
	var got seen
	srv := endpoint(t, "", &got)
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	t.Setenv("http_proxy", "http://127.0.0.1:1")
	res := call(t, HTTP{Getenv: getenv}.Tool(httpDecl(srv.URL, "/ok")), map[string]any{"q": "x"})
	require.False(t, res.IsError, "no proxy from the environment: %s", resultText(res))
}

func TestHTTPToolBody(t *testing.T) {
	var got seen
	srv := endpoint(t, "", &got)
	d := httpDecl(srv.URL, "/ok")
	d.Method = "POST"
	d.Params = append(d.Params, configs.ToolParam{Name: "exact", Type: configs.ParamBoolean, In: "body"})
	d.Params[0].In = "query" // n and exact go to the body, the default for POST
	res := call(t, HTTP{Getenv: getenv}.Tool(d), map[string]any{"q": "x", "n": float64(7), "exact": true})
	require.False(t, res.IsError, resultText(res))
	require.Equal(t, "fixed=1&q=x", got.query)
	require.JSONEq(t, `{"n":7,"exact":true}`, got.body)
	require.Equal(t, "application/json", got.header.Get("Content-Type"))
}

func errorOf(t *testing.T, res *mcp.CallToolResult) toolerr.Error {
	t.Helper()
	require.True(t, res.IsError, resultText(res))
	e, ok := toolerr.FromResult(res)
	require.True(t, ok, resultText(res))
	return e
}

// BenchmarkHTTPTool calls an http tool's handler against a local endpoint;
// BenchmarkBareHTTP does the same request with a plain client, so the
// difference is the tool's own cost (checks, secrets, scrubbing, JSON).
func BenchmarkHTTPTool(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"results":["a","b"]}`))
	}))
	defer srv.Close()
	tool := HTTP{Getenv: getenv}.Tool(httpDecl(srv.URL, "/ok"))
	req := mcp.CallToolRequest{}
	req.Params.Arguments = map[string]any{"q": "golang", "n": float64(3)}
	b.ReportAllocs()
	for b.Loop() {
		res, err := tool.Handler(context.Background(), req)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

func BenchmarkBareHTTP(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"results":["a","b"]}`))
	}))
	defer srv.Close()
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest("GET", srv.URL+"/ok?fixed=1&n=3&q=golang", nil)
		req.Header.Set("X-Api-Key", apiKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
}

// structuredJSON is a result's structured content as JSON, whatever form
// the tool put it in.
func structuredJSON(t testing.TB, res *mcp.CallToolResult) json.RawMessage {
	t.Helper()
	raw, err := structured.JSON(res.StructuredContent)
	require.NoError(t, err)
	return raw
}
