package tracing

import (
	"context"

	"github.com/toolwarden/toolwarden/sandbox"
	"go.opentelemetry.io/otel/attribute"
)

// Runner makes a span of each run of r, with its backend, exit code and
// the limit that stopped it.
func Runner(r sandbox.Runner) sandbox.Runner { return &runner{Runner: r} }

type runner struct{ sandbox.Runner }

func (r *runner) Run(ctx context.Context, req sandbox.Request) (sandbox.Result, error) {
	if !Enabled() {
		return r.Runner.Run(ctx, req)
	}
	ctx, span := Start(ctx, "sandbox.run", attribute.String("toolwarden.sandbox.backend", r.Name()))
	res, err := r.Runner.Run(ctx, req)
	span.SetAttributes(attribute.Int("process.exit.code", res.ExitCode))
	code := ""
	switch {
	case err != nil:
		span.RecordError(err)
		code = "sandbox.error"
	case res.Limit != "":
		span.SetAttributes(attribute.String("toolwarden.sandbox.limit", res.Limit))
		code = "limit." + res.Limit
	}
	End(span, "", code)
	return res, err
}

// Unwrap returns the backend, for what it offers besides Run
// (sandbox.WarmerOf).
func (r *runner) Unwrap() sandbox.Runner { return r.Runner }

// Close closes the backend when it has something to close.
func (r *runner) Close() error {
	if c, ok := r.Runner.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}
