package exec

import (
	"context"
	"strings"

	"github.com/toolwarden/toolwarden/sandbox"
)

// NetworkFunc gives one run its way out when the operator configured a
// network block: it sets req.Network (the egress proxy, served for this
// call alone) and adds the placeholders' variables to req.Env, and
// returns what ends the call's use of the proxy once the run is over.
// The server sets it (package mcpserver); without one a run has no
// network at all.
type NetworkFunc func(ctx context.Context, req *sandbox.Request) (done func(), err error)

// WithNetwork has the runs of run_script and run_command use network
// (exec.network); nil leaves them without network. It returns s.
func (s *Set) WithNetwork(network NetworkFunc) *Set {
	s.network = network
	return s
}

// RunWithNetwork runs req through runner with its way out from network
// (nil: none), ended when the run is.
func RunWithNetwork(ctx context.Context, runner sandbox.Runner, network NetworkFunc, req sandbox.Request) (sandbox.Result, error) {
	if network != nil {
		done, err := network(ctx, &req)
		if err != nil {
			return sandbox.Result{}, err
		}
		defer done()
	}
	return runner.Run(ctx, req)
}

// withNetworkNote is a description saying what network exec.network
// gives (unchanged without one).
func (s *Set) withNetworkNote(desc string) string {
	note := NetworkNote(s.cfg.Network.Allow)
	if note == "" {
		return desc
	}
	return noNetwork.Replace(desc) + note
}

// noNetwork rewrites what the descriptions say of a sandbox without network.
var noNetwork = strings.NewReplacer("no network at all", "no network but the egress proxy (see Network below)",
	"(no network, ", "(no network but the egress proxy, ")

// NetworkNote is what a tool's description and preview say of the
// network: none, or the hosts its proxy reaches.
func NetworkNote(allow []string) string {
	if len(allow) == 0 {
		return ""
	}
	return "\n\nNetwork: only through the HTTP(S) proxy set in HTTPS_PROXY/HTTP_PROXY, to these host:port pairs alone: " +
		strings.Join(allow, ", ") + ". Every other connection, DNS lookups and raw sockets reach nothing."
}
