package mcpserver

import (
	"fmt"
	"net"
	"os"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/egress"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools/upstream"
)

// upstreamLimits bound one sandboxed upstream process's use of the proxy,
// for its whole life: it serves every caller, for as long as the server
// runs, so the per-call byte caps of a run would cut it off in time.
var upstreamLimits = egress.Limits{MaxConns: 32, MaxBytesUp: 1 << 40, MaxBytesDown: 1 << 40}

// withUpstreamNetwork gives the sandboxed upstream i its network block's
// way out through the egress proxy. The process serves every caller, so
// what it may reach is decided by the block alone: callers'
// net:connect capabilities do not narrow it (docs/egress.md). Each start
// of the process (restarts too) is one Call of the proxy, with its own
// call ID on the egress audit lines and the identity "upstream:NAME".
func (h *egressHub) withUpstreamNetwork(opts *upstream.Options, i int, u configs.Upstream) error {
	if h == nil || !u.Network.Enabled() || u.URL != "" || !u.Sandboxed() {
		return nil
	}
	key := fmt.Sprintf("upstreams[%d].network", i)
	pol, err := egress.NewPolicy(key, u.Network, os.Getenv)
	if err != nil {
		return err
	}
	var ca []byte
	if len(u.Network.Credentials) > 0 {
		ca = h.proxy.CAPEM()
	}
	opts.Network = &sandbox.Network{CACertPEM: ca, Serve: func(l net.Listener) {
		id := h.newCallID()
		call := guard.Call{Tool: u.Name + "__*", Session: "-", Identity: "upstream:" + u.Name, CallID: id}
		h.calls.Store(id, &egressCall{call: call, key: key})
		c := h.proxy.Call(id, pol, upstreamLimits)
		_ = c.Serve(l) // until the process ends and the listener is closed
		c.Close()
		h.calls.Delete(id)
	}}
	opts.NetworkEnv = placeholderEnv(u.Network)
	return nil
}
