package mcpserver_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/mcpserver"
)

// BenchmarkHTTPReadFile4KiBParallel is the server side of the streamable
// HTTP load test: 4 KiB read_file calls in one 2025-11-25 session from
// parallel clients over real loopback HTTP. Profile it with -cpuprofile to
// see what a call costs beyond the tool.
func BenchmarkHTTPReadFile4KiBParallel(b *testing.B) {
	h, stop := benchServer(b).HTTPHandler(mcpserver.HTTPOptions{Token: testToken, MaxBodyBytes: 64 << 10,
		MaxSessions: 10, IdleTimeout: time.Minute})
	srv := httptest.NewServer(h)
	b.Cleanup(func() { stop(ctxT(b)); srv.Close() })
	tr := srv.Client().Transport.(*http.Transport)
	tr.MaxIdleConnsPerHost = 64
	post := func(body, session string) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(mcp.HeaderProtocolVersion, "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res, out
	}
	res, out := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`, "")
	require.Equal(b, http.StatusOK, res.StatusCode, "%s", out)
	session := res.Header.Get("Mcp-Session-Id")
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"bench.txt"}}}`
	b.ReportAllocs()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, out := post(call, session)
			if res.StatusCode != http.StatusOK || !bytes.Contains(out, []byte("0123456789abcdef")) {
				b.Fatalf("%s %.300s", res.Status, out)
			}
		}
	})
}
