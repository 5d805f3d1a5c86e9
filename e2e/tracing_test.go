package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP trace endpoint that keeps the spans it gets.
type otlpReceiver struct {
	mu    sync.Mutex
	spans map[string]string            // span name -> trace ID (hex)
	attrs map[string]map[string]string // span name -> its string attributes
	svc   []string                     // service.name of each export
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req collectortrace.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				o.svc = append(o.svc, a.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				o.spans[s.Name] = hexOf(s.TraceId)
				if o.attrs == nil {
					o.attrs = map[string]map[string]string{}
				}
				o.attrs[s.Name] = map[string]string{}
				for _, a := range s.Attributes {
					o.attrs[s.Name][a.Key] = a.GetValue().GetStringValue()
				}
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

func (o *otlpReceiver) traceOf(name string) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	id, ok := o.spans[name]
	return id, ok
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// TestTracesBinary: with OTEL_EXPORTER_OTLP_ENDPOINT set, the built
// binary exports a call's spans over OTLP/HTTP, in the trace its client
// named in _meta.traceparent.
func TestTracesBinary(t *testing.T) {
	t.Parallel()
	rcv := &otlpReceiver{spans: map[string]string{}}
	collector := httptest.NewServer(rcv)
	defer collector.Close()
	ws, env := workspace(t)
	base := startHTTP(t, ws, append(env, "OTEL_EXPORTER_OTLP_ENDPOINT="+collector.URL, "OTEL_BSP_SCHEDULE_DELAY=100"))
	c, err := client.NewStreamableHttpClient(base+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer e2e-token-0123456789"}))
	require.NoError(t, err)
	require.NoError(t, c.Start(ctxT(t)))
	defer c.Close()
	initialize(t, c)
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "read_file", map[string]any{"path": "hello.txt"}
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{"traceparent": "00-" + trace + "-00f067aa0ba902b7-01"}}
	res, err := c.CallTool(ctxT(t), req)
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.Eventually(t, func() bool {
		_, a := rcv.traceOf("tools/call read_file")
		_, b := rcv.traceOf("tool.handler")
		return a && b
	}, 20*time.Second, 50*time.Millisecond, "the spans reach the OTLP endpoint")
	for _, name := range []string{"tools/call read_file", "guard.decide", "tool.handler"} {
		id, ok := rcv.traceOf(name)
		require.True(t, ok, name)
		require.Equal(t, trace, id, name)
	}
	rcv.mu.Lock()
	require.Contains(t, rcv.svc, "toolwarden")
	call := rcv.attrs["tools/call read_file"]
	rcv.mu.Unlock()
	// The OpenTelemetry MCP semantic conventions' attributes.
	require.Equal(t, "tools/call", call["mcp.method.name"])
	require.Equal(t, "read_file", call["gen_ai.tool.name"])
	require.NotEmpty(t, call["jsonrpc.request.id"], "the JSON-RPC ID of the request")
	require.Regexp(t, `^\d{4}-\d{2}-\d{2}$`, call["mcp.protocol.version"])
	require.Empty(t, call["error.type"])
	// A call of the stateless 2026-07-28 protocol has no session, so no
	// mcp.session.id.
	require.NotContains(t, call, "mcp.session.id")

	req.Params.Arguments = map[string]any{"path": "../outside.txt"}
	req.Params.Meta = nil
	res, err = c.CallTool(ctxT(t), req)
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Eventually(t, func() bool {
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		return rcv.attrs["tools/call read_file"]["error.type"] == "tool_error"
	}, 20*time.Second, 50*time.Millisecond, "a denied call's span has error.type tool_error")

	// A 2025-11-25 session's call names it as its audit lines do: by the
	// digest of the HTTP session ID, a credential never exported itself.
	legacy, err := client.NewStreamableHttpClient(base+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer e2e-token-0123456789"}))
	require.NoError(t, err)
	connectAs(t, legacy, mcp.LATEST_LEGACY_PROTOCOL_VERSION)
	req.Params.Name, req.Params.Arguments = "list_directory", map[string]any{"path": "."}
	res, err = legacy.CallTool(ctxT(t), req)
	require.NoError(t, err)
	require.False(t, res.IsError)
	var session map[string]string
	require.Eventually(t, func() bool {
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		session = rcv.attrs["tools/call list_directory"]
		return session != nil
	}, 20*time.Second, 50*time.Millisecond, "the span reaches the OTLP endpoint")
	require.Regexp(t, `^tw-[0-9a-f]{16}$`, session["mcp.session.id"])
	require.Contains(t, auditText(t, auditPathOf(t, env)), `"session":"`+session["mcp.session.id"]+`"`)
	sid := legacy.GetSessionId()
	require.NotEmpty(t, sid)
	for k, v := range session {
		require.NotContains(t, v, sid, "%s holds the raw session ID", k)
	}
}
