package metrics

import (
	"context"

	"github.com/toolwarden/toolwarden/sandbox"
)

// Runner counts r's runs by backend and the limit that stopped them.
func (m *Metrics) Runner(r sandbox.Runner) sandbox.Runner { return &runner{Runner: r, m: m} }

type runner struct {
	sandbox.Runner
	m *Metrics
}

// Run runs req and counts it: limit "none" for a run no limit stopped,
// "error" for a sandbox that failed.
func (r *runner) Run(ctx context.Context, req sandbox.Request) (sandbox.Result, error) {
	res, err := r.Runner.Run(ctx, req)
	backend, limit := r.Name(), res.Limit
	switch {
	case err != nil:
		limit = "error"
	case limit == "":
		limit = "none"
	}
	r.m.sandboxRuns.WithLabelValues(backend, limit).Inc()
	if err == nil {
		r.m.sandboxDuration.WithLabelValues(backend).Observe(res.Duration.Seconds())
	}
	return res, err
}

// Unwrap returns the backend, for what it offers besides Run
// (sandbox.WarmerOf).
func (r *runner) Unwrap() sandbox.Runner { return r.Runner }

// Close closes the backend when it has something to close (runsc's
// network namespace).
func (r *runner) Close() error {
	if c, ok := r.Runner.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}
