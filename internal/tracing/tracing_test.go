package tracing

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/sandbox"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// record turns tracing on into an in-memory exporter until the test ends.
func record(t *testing.T) *tracetest.InMemoryExporter {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	Use(tp)
	t.Cleanup(func() { Use(nil); _ = tp.Shutdown(context.Background()) })
	return exp
}

const (
	remoteTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	remoteSpan  = "00f067aa0ba902b7"
	traceparent = "00-" + remoteTrace + "-" + remoteSpan + "-01"
)

// A call's span is a child of the trace context in its _meta (SEP-414).
func TestStartCallTakesTheParentFromMeta(t *testing.T) {
	exp := record(t)
	ctx, span := StartCall(context.Background(), Call{Tool: "read_file", Meta: map[string]any{"traceparent": traceparent, "progressToken": 3}})
	_, child := Start(ctx, "guard.decide")
	End(child, "allowed", "")
	End(span, "", "not_found")
	spans := exp.GetSpans()
	require.Len(t, spans, 2)
	call := spans[1]
	require.Equal(t, "tools/call read_file", call.Name)
	require.Equal(t, remoteTrace, call.SpanContext.TraceID().String())
	require.Equal(t, remoteSpan, call.Parent.SpanID().String())
	require.True(t, call.Parent.IsRemote())
	require.Equal(t, trace.SpanKindServer, call.SpanKind)
	require.Equal(t, codes.Error, call.Status.Code)
	require.Equal(t, call.SpanContext.SpanID(), spans[0].Parent.SpanID(), "the decision is the call's child")
	for _, a := range call.Attributes {
		require.NotEqual(t, "mcp.session.id", string(a.Key), "a call of no session names none")
	}
}

// The call's span carries the OpenTelemetry MCP semantic conventions'
// attributes: the method, tool, JSON-RPC request ID (a number as JSON
// decodes it, or a string), protocol version, session, and error.type tool_error
// for an isError result, _OTHER for a JSON-RPC error.
func TestCallSpanSemanticConventions(t *testing.T) {
	tests := []struct {
		name    string
		id      any
		wantID  string
		isError bool
		err     error
		errType string
	}{
		{"ok", float64(7), "7", false, nil, ""},
		{"tool error", "req-1", "req-1", true, nil, "tool_error"},
		{"json-rpc error", float64(12345678901), "12345678901", false, errors.New("boom"), "_OTHER"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := record(t)
			_, span := StartCall(context.Background(), Call{Tool: "read_file", RequestID: tt.id, ProtocolVersion: "2025-11-25", SessionID: "stdio"})
			code := ""
			if tt.isError {
				code = "denied.policy"
			}
			EndCall(span, tt.isError, code, tt.err)
			s := exp.GetSpans()[0]
			attrs := map[string]string{}
			for _, a := range s.Attributes {
				attrs[string(a.Key)] = a.Value.String()
			}
			require.Equal(t, "tools/call", attrs["mcp.method.name"])
			require.Equal(t, "read_file", attrs["gen_ai.tool.name"])
			require.Equal(t, "execute_tool", attrs["gen_ai.operation.name"])
			require.Equal(t, tt.wantID, attrs["jsonrpc.request.id"])
			require.Equal(t, "2025-11-25", attrs["mcp.protocol.version"])
			require.Equal(t, "stdio", attrs["mcp.session.id"])
			require.Equal(t, tt.errType, attrs["error.type"])
			if tt.errType != "" {
				require.Equal(t, codes.Error, s.Status.Code)
			} else {
				require.NotEqual(t, codes.Error, s.Status.Code)
			}
		})
	}
}

// RememberRequest carries a request's ID to its span while tracing is
// on, and nothing while it is off.
func TestRequestIDFromTheHook(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	RememberRequest(ctx, float64(3))
	require.Nil(t, RequestID(ctx), "off: nothing noted")
	record(t)
	RememberRequest(ctx, float64(3))
	require.Equal(t, float64(3), RequestID(ctx))
	require.Nil(t, RequestID(context.Background()))
	ForgetRequest(ctx)
	require.Nil(t, RequestID(ctx))
}

// Without trace context, and with garbage in its place, a call starts a
// new trace: a client cannot break the server with a bad traceparent.
func TestStartCallWithoutOrWithBadParent(t *testing.T) {
	for _, meta := range []map[string]any{nil, {"traceparent": "garbage"}, {"traceparent": 42}, {"traceparent": "00-" + remoteTrace + "-0000000000000000-01"}} {
		exp := record(t)
		_, span := StartCall(context.Background(), Call{Tool: "t", Meta: meta})
		span.End()
		s := exp.GetSpans()[0]
		require.False(t, s.Parent.IsValid(), "%v", meta)
		require.NotEqual(t, remoteTrace, s.SpanContext.TraceID().String())
	}
}

// The HTTP traceparent header is the parent when _meta has none.
func TestHTTPHeaderParent(t *testing.T) {
	exp := record(t)
	h := HTTP(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, span := StartCall(r.Context(), Call{Tool: "read_file"})
		span.End()
	}))
	req := httptest.NewRequest("POST", "/mcp", nil)
	req.Header.Set("traceparent", traceparent)
	h.ServeHTTP(httptest.NewRecorder(), req)
	s := exp.GetSpans()[0]
	require.Equal(t, remoteTrace, s.SpanContext.TraceID().String())
	require.Equal(t, remoteSpan, s.Parent.SpanID().String())
}

type fakeRunner struct {
	res sandbox.Result
	err error
}

func (f fakeRunner) Run(context.Context, sandbox.Request) (sandbox.Result, error) {
	return f.res, f.err
}
func (fakeRunner) Name() string { return "fake" }

func TestRunnerSpans(t *testing.T) {
	exp := record(t)
	ctx, parent := Start(context.Background(), "tool.handler")
	_, _ = Runner(fakeRunner{res: sandbox.Result{Limit: sandbox.LimitMemory, ExitCode: 137}}).Run(ctx, sandbox.Request{})
	_, _ = Runner(fakeRunner{err: errors.New("runsc failed")}).Run(ctx, sandbox.Request{})
	parent.End()
	spans := exp.GetSpans()
	require.Len(t, spans, 3)
	for _, s := range spans[:2] {
		require.Equal(t, "sandbox.run", s.Name)
		require.Equal(t, parent.SpanContext().SpanID(), s.Parent.SpanID())
		require.Equal(t, codes.Error, s.Status.Code)
	}
	require.Equal(t, "limit.memory", spans[0].Status.Description)
}

// Off, nothing is made and nothing allocated.
func TestOffCostsNoAllocation(t *testing.T) {
	Use(nil)
	ctx := context.Background()
	meta := map[string]any{"traceparent": traceparent}
	allocs := testing.AllocsPerRun(100, func() {
		c, span := StartCall(ctx, Call{Tool: "read_file", Meta: meta})
		_, child := Start(c, "guard.decide")
		End(child, "allowed", "")
		End(span, "", "")
	})
	require.Zero(t, allocs)
	c, span := StartCall(ctx, Call{Tool: "read_file", Meta: meta})
	require.Equal(t, ctx, c)
	require.False(t, span.IsRecording())
}

// Setup leaves tracing off without an OTLP endpoint, and refuses a
// protocol it does not speak by the variable's name.
func TestSetupFromEnvironment(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	shutdown, err := Setup(context.Background(), "test")
	require.NoError(t, err)
	require.False(t, Enabled())
	require.NoError(t, shutdown(context.Background()))

	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	_, err = Setup(context.Background(), "test")
	require.ErrorContains(t, err, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc")

	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "")
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	require.False(t, Configured())
}
