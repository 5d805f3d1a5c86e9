package tracing

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
)

// HTTP puts the trace context of a request's traceparent header into its
// context, for the calls it carries; off, it passes requests on untouched.
func HTTP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s := state.Load(); s != nil && r.Header.Get("traceparent") != "" {
			r = r.WithContext(s.propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header)))
		}
		h.ServeHTTP(w, r)
	})
}

// Transport makes a client span of each request rt sends (the S3 client's)
// while tracing is on, and propagates the trace context to the server.
func Transport(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return otelhttp.NewTransport(rt, otelhttp.WithFilter(func(*http.Request) bool { return Enabled() }))
}
