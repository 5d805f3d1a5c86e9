package mcpserver_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/tracing"
	"github.com/toolwarden/toolwarden/mcpserver"
	"github.com/toolwarden/toolwarden/mcpserver/httpserve"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

const (
	remoteTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	remoteSpan  = "00f067aa0ba902b7"
	traceparent = "00-" + remoteTrace + "-" + remoteSpan + "-01"
)

// recordSpans turns tracing on into an in-memory exporter until the test ends.
func recordSpans(t *testing.T) *tracetest.InMemoryExporter {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tracing.Use(tp)
	t.Cleanup(func() { tracing.Use(nil); _ = tp.Shutdown(context.Background()) })
	return exp
}

// spansByName indexes the ended spans by name (the last of each name).
func spansByName(exp *tracetest.InMemoryExporter) map[string]tracetest.SpanStub {
	out := map[string]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		out[s.Name] = s
	}
	return out
}

func tracedCall(t *testing.T, c *client.Client, name string, args map[string]any, meta map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	if meta != nil {
		req.Params.Meta = &mcp.Meta{AdditionalFields: meta}
	}
	res, err := c.CallTool(ctxT(t), req)
	require.NoError(t, err)
	return res
}

// A call is one trace under the client's _meta.traceparent: the call's
// span, with the guard's decision and the handler as its children.
func TestCallSpansUnderMetaTraceparent(t *testing.T) {
	exp := recordSpans(t)
	c := inProcess(t, newFixture(t).server(t))
	res := tracedCall(t, c, "read_file", map[string]any{"path": "hello.txt"}, map[string]any{"traceparent": traceparent})
	require.False(t, res.IsError)
	spans := spansByName(exp)
	call, decide, handler := spans["tools/call read_file"], spans["guard.decide"], spans["tool.handler"]
	require.Equal(t, remoteTrace, call.SpanContext.TraceID().String())
	require.Equal(t, remoteSpan, call.Parent.SpanID().String())
	require.Equal(t, call.SpanContext.SpanID(), decide.Parent.SpanID())
	require.Equal(t, call.SpanContext.SpanID(), handler.Parent.SpanID())
	require.Contains(t, decide.Attributes, attribute.String("toolwarden.outcome", "allowed"))
	require.Equal(t, codes.Unset, call.Status.Code)
}

// A denied call's decision span names the rule and the code, and no
// handler span is made: the handler never ran.
func TestDeniedCallSpan(t *testing.T) {
	exp := recordSpans(t)
	c := inProcess(t, newFixture(t).server(t))
	res := tracedCall(t, c, "read_file", map[string]any{"path": "../secret.txt"}, nil)
	require.True(t, res.IsError)
	spans := spansByName(exp)
	decide := spans["guard.decide"]
	require.Contains(t, decide.Attributes, attribute.String("toolwarden.rule", "path.inside_workspace"))
	require.Equal(t, codes.Error, decide.Status.Code)
	require.NotContains(t, spans, "tool.handler")
	require.Equal(t, codes.Error, spans["tools/call read_file"].Status.Code)
	require.False(t, spans["tools/call read_file"].Parent.IsValid(), "no trace context: a new trace")
}

// The wait for a human's approval is a span of its own.
func TestApprovalWaitSpan(t *testing.T) {
	exp := recordSpans(t)
	f := newFixture(t)
	withApproval(f, time.Minute)
	h := &human{}
	h.says(accept(false))
	c := clientKinds[0].open(t, f.server(t), client.WithElicitationHandler(h))
	res := tracedCall(t, c, "write_file", writeArgs("x"), map[string]any{"traceparent": traceparent})
	require.False(t, res.IsError, "%v", res.Content)
	spans := spansByName(exp)
	wait, call := spans["approval.wait"], spans["tools/call write_file"]
	require.Equal(t, call.SpanContext.SpanID(), wait.Parent.SpanID())
	require.Contains(t, wait.Attributes, attribute.String("toolwarden.outcome", "approved"))
	require.Equal(t, remoteTrace, spans["tool.handler"].SpanContext.TraceID().String())
}

// Over streamable HTTP, the request's traceparent header is the parent
// when _meta has none.
func TestCallSpanUnderHTTPTraceparent(t *testing.T) {
	exp := recordSpans(t)
	b := newFixture(t).server(t)
	h, stop := b.HTTPHandler(mcpserver.HTTPOptions{Token: testToken, MaxBodyBytes: 1 << 20, MaxSessions: 10, IdleTimeout: time.Minute})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { stop(context.Background()); srv.Close() })
	tr, err := transport.NewStreamableHTTP(srv.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{
		"Authorization": "Bearer " + testToken, "traceparent": traceparent}))
	require.NoError(t, err)
	c := start(t, client.NewClient(tr), legacyVersion)
	require.False(t, tracedCall(t, c, "read_file", map[string]any{"path": "hello.txt"}, nil).IsError)
	call := spansByName(exp)["tools/call read_file"]
	require.Equal(t, remoteTrace, call.SpanContext.TraceID().String())
	require.Equal(t, remoteSpan, call.Parent.SpanID().String())

	// An HTTP session ID is a credential: the span names the session by
	// the digest the audit log uses, never by the ID itself.
	sid := c.GetSessionId()
	require.NotEmpty(t, sid)
	require.Contains(t, call.Attributes, attribute.String("mcp.session.id", httpserve.SessionDigest(sid)))
	for _, a := range call.Attributes {
		require.NotContains(t, a.Value.String(), sid, "%s holds the raw session ID", a.Key)
	}
}

// The call's span names its session (mcp.session.id), as the audit
// line of the call does.
func TestCallSpanNamesTheSession(t *testing.T) {
	exp := recordSpans(t)
	f := newFixture(t)
	c := inProcess(t, f.server(t))
	require.False(t, tracedCall(t, c, "read_file", map[string]any{"path": "hello.txt"}, nil).IsError)
	got := map[string]string{}
	for _, a := range spansByName(exp)["tools/call read_file"].Attributes {
		got[string(a.Key)] = a.Value.String()
	}
	require.True(t, strings.HasPrefix(got["mcp.session.id"], "inprocess-"), "mcp.session.id: %q", got["mcp.session.id"])
	lines := 0
	for _, e := range verifiedEntries(t, f.auditPath) {
		if e.Tool == "read_file" {
			lines++
			require.Equal(t, got["mcp.session.id"], e.Session, "the span and the call's audit lines name one session")
		}
	}
	require.NotZero(t, lines)
}

// A graph tool's Neo4j transaction is a span under the handler's
// (service environment).
func TestNeo4jSpan(t *testing.T) {
	exp := recordSpans(t)
	c := graphClient(t)
	res := tracedCall(t, c, "list_missions", map[string]any{}, map[string]any{"traceparent": traceparent})
	require.False(t, res.IsError, "%v", res.Content)
	spans := spansByName(exp)
	db, handler := spans["neo4j read"], spans["tool.handler"]
	require.Equal(t, handler.SpanContext.SpanID(), db.Parent.SpanID())
	require.Equal(t, remoteTrace, db.SpanContext.TraceID().String())
	require.Contains(t, db.Attributes, attribute.String("db.system.name", "neo4j"))
}

// An artifact tool's S3 requests are client spans under the handler's,
// and carry the trace to the store (private MinIO).
func TestS3Spans(t *testing.T) {
	exp := recordSpans(t)
	f, _ := artifactFixture(t)
	c := inProcess(t, f.server(t))
	res := tracedCall(t, c, "store_artifact", map[string]any{"task_id": "0b5c1a4e-9a43-4d4e-8a4f-1f6c1b2f3a4d", "name": "notes.txt", "content": "hello", "encoding": "text"},
		map[string]any{"traceparent": traceparent})
	require.False(t, res.IsError, "%v", res.Content)
	handler := spansByName(exp)["tool.handler"]
	var s3 []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.SpanKind == trace.SpanKindClient && s.Parent.SpanID() == handler.SpanContext.SpanID() {
			s3 = append(s3, s)
		}
	}
	require.NotEmpty(t, s3, "the PUT to the store is a span of the call")
	require.Equal(t, remoteTrace, s3[0].SpanContext.TraceID().String())
}
