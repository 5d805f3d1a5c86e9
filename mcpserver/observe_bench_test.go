package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/internal/metrics"
	"github.com/toolwarden/toolwarden/internal/tracing"
	"github.com/toolwarden/toolwarden/mcpserver"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// BenchmarkObservedCall is BenchmarkReadFile4KiBServerSide with nothing
// watching (the default: no metrics.addr, no OTLP endpoint), with the
// Prometheus metrics, and with tracing on (spans to an in-memory
// exporter), in one run: what watching costs beside the call.
func BenchmarkObservedCall(b *testing.B) {
	for _, c := range []struct {
		name    string
		metrics bool
		traces  bool
	}{{"off", false, false}, {"metrics", true, false}, {"traces", false, true}, {"off-again", false, false}} {
		b.Run(c.name, func(b *testing.B) {
			f := newFixture(b)
			require.NoError(b, os.WriteFile(f.ws+"/bench.txt", []byte(strings.Repeat("0123456789abcdef\n", 241)), 0o644))
			audit, err := audit.Open(f.auditPath)
			require.NoError(b, err)
			b.Cleanup(func() { audit.Close() })
			var obs mcpserver.Observers
			if c.metrics {
				m := metrics.New([]string{"read_file"})
				obs = mcpserver.Observers{Guard: m, Sandbox: m.Runner, WaitingForApproval: m.WaitingForApproval, Call: m.ObserveCall}
			}
			if c.traces {
				tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
				tracing.Use(tp)
				b.Cleanup(func() { tracing.Use(nil) })
			}
			srv, err := mcpserver.BuildObserved(context.Background(), f.cfg, audit, "bench", slog.New(slog.NewTextHandler(io.Discard, nil)), obs)
			require.NoError(b, err)
			b.Cleanup(func() { srv.Close() })
			ctx := context.Background()
			srv.MCP().HandleMessage(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`))
			msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"bench.txt"},"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}`)
			b.ReportAllocs()
			for b.Loop() {
				out, err := json.Marshal(srv.MCP().HandleMessage(ctx, msg))
				if err != nil || strings.Contains(string(out), `"isError":true`) {
					b.Fatalf("bad response %.300s", out)
				}
			}
		})
	}
}
