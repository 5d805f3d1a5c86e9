package sandbox

import (
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkNetworkRun compares, in one run, a plain run with a run that
// has a Network (its socket, trust store and forwarder), for each backend.
func BenchmarkNetworkRun(b *testing.B) {
	for _, r := range []Runner{benchRunsc(b), benchBwrap(b)} {
		b.Run(r.Name(), func(b *testing.B) {
			for _, network := range []bool{false, true} {
				name := "plain"
				if network {
					name = "network"
				}
				b.Run(name, func(b *testing.B) {
					loopP50(b, func() {
						req := Request{Argv: benchArgv["true"], Env: []string{"PATH=/usr/bin"}}
						if network {
							req.Network = &Network{Serve: func(l net.Listener) { _ = http.Serve(l, http.NotFoundHandler()) }}
						}
						res, err := r.Run(context.Background(), req)
						require.NoError(b, err)
						require.Equal(b, 0, res.ExitCode, string(res.Stderr))
					})
				})
			}
		})
	}
}
