package tracing

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Configured reports whether the environment asks for traces: an OTLP
// endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or its traces form) and
// OTEL_TRACES_EXPORTER is not "none".
func Configured() bool {
	if os.Getenv("OTEL_TRACES_EXPORTER") == "none" || os.Getenv("OTEL_SDK_DISABLED") == "true" {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup turns tracing on when the environment asks for it (Configured):
// spans are batched and exported over OTLP/HTTP, configured by the
// standard OTEL_EXPORTER_OTLP_* variables (endpoint, headers, timeout,
// TLS), the resource by OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES,
// sampling by OTEL_TRACES_SAMPLER. shutdown flushes the spans still
// queued; it is a no-op when tracing stayed off.
func Setup(ctx context.Context, serviceVersion string) (shutdown func(context.Context) error, err error) {
	if !Configured() {
		return func(context.Context) error { return nil }, nil
	}
	if p := protocol(); p != "http/protobuf" {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: toolwarden exports traces over http/protobuf only", p)
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "toolwarden"), attribute.String("service.version", serviceVersion)),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	Use(tp)
	return func(ctx context.Context) error {
		Use(nil)
		return tp.Shutdown(ctx)
	}, nil
}

// protocol is the OTLP protocol the environment asks for traces.
func protocol() string {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return "http/protobuf"
}
