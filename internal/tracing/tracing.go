// Package tracing makes OpenTelemetry spans of each tool call: the call,
// the guard's decision, the wait for a human's approval, the handler, the
// sandbox run and the S3 and Neo4j requests it makes. Spans go out over
// OTLP/HTTP only when the standard OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; otherwise tracing is off and
// every function here returns at once, without a span or an allocation.
//
// A call's parent is the trace context its client sent: _meta.traceparent
// (and tracestate) in the request (SEP-414), else the HTTP request's
// traceparent header.
package tracing

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ScopeName names toolwarden's tracer.
const ScopeName = "github.com/toolwarden/toolwarden"

// state is what Use installed; nil while tracing is off.
var state atomic.Pointer[installed]

type installed struct {
	tracer     trace.Tracer
	provider   trace.TracerProvider
	propagator propagation.TextMapPropagator
}

// propagator reads W3C trace context and baggage.
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Use turns tracing on with tp (Setup's OTLP provider, or a test's), and
// off again with nil. It also becomes OpenTelemetry's global provider, for
// the instrumented HTTP transports.
func Use(tp trace.TracerProvider) {
	if tp == nil {
		state.Store(nil)
		otel.SetTracerProvider(noop.NewTracerProvider())
		return
	}
	state.Store(&installed{tracer: tp.Tracer(ScopeName), provider: tp, propagator: propagator})
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagator)
}

// Enabled reports whether spans are made.
func Enabled() bool { return state.Load() != nil }

// noSpan is what every Start returns while tracing is off.
var noSpan = trace.SpanFromContext(context.Background())

// Start begins a child span of ctx's span named name; off, it returns ctx
// and a span that records nothing.
func Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	s := state.Load()
	if s == nil {
		return ctx, noSpan
	}
	return s.tracer.Start(ctx, name, trace.WithAttributes(attrs...))
}

// End ends span; a non-empty code (a toolerr code) marks it an error.
func End(span trace.Span, outcome, code string) {
	if !span.IsRecording() {
		span.End()
		return
	}
	if outcome != "" {
		span.SetAttributes(attribute.String("toolwarden.outcome", outcome))
	}
	if code != "" {
		span.SetAttributes(attribute.String("toolwarden.error.code", code))
		span.SetStatus(codes.Error, code)
	}
	span.End()
}

// Call is what the span of one tools/call names, after the
// OpenTelemetry MCP semantic conventions: the tool (gen_ai.tool.name),
// the JSON-RPC request ID (jsonrpc.request.id), the protocol version in
// effect (mcp.protocol.version), the session (mcp.session.id), and the
// request's _meta, whose trace context is the span's parent.
type Call struct {
	Tool            string
	RequestID       any
	ProtocolVersion string
	// SessionID is the session as the audit log names it (a digest of an
	// HTTP session ID, which is a credential); "" for a call of no
	// session, which then has no mcp.session.id.
	SessionID string
	Meta      map[string]any
}

// StartCall begins the span of one tools/call, named "tools/call <tool>"
// as the conventions name it. Its parent is the trace context in the
// request's _meta (traceparent, tracestate, baggage), when there is one,
// else ctx's (from the HTTP headers, see HTTP).
func StartCall(ctx context.Context, c Call) (context.Context, trace.Span) {
	s := state.Load()
	if s == nil {
		return ctx, noSpan
	}
	if _, ok := c.Meta["traceparent"].(string); ok {
		ctx = s.propagator.Extract(ctx, metaCarrier(c.Meta))
	}
	attrs := []attribute.KeyValue{attribute.String("mcp.method.name", "tools/call"), attribute.String("gen_ai.tool.name", c.Tool),
		attribute.String("gen_ai.operation.name", "execute_tool")}
	if id := requestID(c.RequestID); id != "" {
		attrs = append(attrs, attribute.String("jsonrpc.request.id", id))
	}
	if c.ProtocolVersion != "" {
		attrs = append(attrs, attribute.String("mcp.protocol.version", c.ProtocolVersion))
	}
	if c.SessionID != "" {
		attrs = append(attrs, attribute.String("mcp.session.id", c.SessionID))
	}
	return s.tracer.Start(ctx, "tools/call "+c.Tool, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
}

// EndCall ends the span of a call: a result with isError sets error.type
// tool_error (the conventions' value) and the error status with the
// toolerr code; a JSON-RPC error sets error.type _OTHER.
func EndCall(span trace.Span, isError bool, code string, err error) {
	if !span.IsRecording() {
		span.End()
		return
	}
	switch {
	case err != nil:
		span.SetAttributes(attribute.String("error.type", "_OTHER"))
		span.SetStatus(codes.Error, err.Error())
	case isError:
		span.SetAttributes(attribute.String("error.type", "tool_error"))
		if code == "" {
			span.SetStatus(codes.Error, "tool_error")
		}
	}
	End(span, "", code)
}

// requestID is a JSON-RPC ID as the conventions record it: a string or
// a number as text.
func requestID(id any) string {
	switch v := id.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64: // a JSON number decoded into any
		return strconv.FormatFloat(v, 'f', -1, 64)
	case fmt.Stringer:
		return v.String()
	default:
		return fmt.Sprint(v)
	}
}

// metaCarrier reads trace context from a request's _meta fields (SEP-414).
// Only string values count; the carrier never writes.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(string, string) {}

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
