package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/egress"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/guard/outfilter"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools/exec"
)

// egressHub is the server's one egress proxy (docs/egress.md) and what
// each call's use of it is tied to: the call's ID, caller and audit
// lines. A server whose config allows no network has none (nil), and
// starts nothing for it.
type egressHub struct {
	proxy   *egress.Proxy
	audit   guard.Auditor
	log     *slog.Logger
	metrics func(host string, allowed bool, rule string, up, down int64)
	guard   atomic.Pointer[guard.Guard]

	// prefix and seq make call IDs: unique within this process, told
	// apart from other processes' by the random prefix.
	prefix string
	seq    atomic.Uint64
	// calls are the calls using the proxy now, by call ID.
	calls sync.Map // string → *egressCall
}

// egressCall is one call's use of the proxy.
type egressCall struct {
	call guard.Call
	key  string // the network block's config key
}

// wantsEgress says whether some network block of cfg allows anything.
func wantsEgress(cfg configs.Config) bool {
	if cfg.Exec.Network.Enabled() {
		return true
	}
	for _, t := range cfg.Tools {
		if t.Type == configs.ToolCLI && t.Network.Enabled() {
			return true
		}
	}
	for _, u := range cfg.Upstreams {
		if u.URL == "" && u.Sandboxed() && u.Network.Enabled() {
			return true
		}
	}
	return false
}

// newEgressHub makes the proxy when cfg allows some network, nil
// otherwise; its events are written to auditor and counted by obs.
func newEgressHub(cfg configs.Config, auditor guard.Auditor, log *slog.Logger, obs Observers) (*egressHub, error) {
	if !wantsEgress(cfg) {
		return nil, nil
	}
	var nonce [4]byte
	_, _ = rand.Read(nonce[:])
	h := &egressHub{audit: auditor, log: log, metrics: obs.Egress, prefix: "c" + hex.EncodeToString(nonce[:]) + "-"}
	scan, err := secretScanner()
	if err != nil {
		return nil, err
	}
	p, err := egress.New(egress.Options{OnEvent: h.record, Scan: scan})
	if err != nil {
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	h.proxy = p
	log.Info("egress proxy ready: sandboxes reach their network blocks' hosts through it")
	return h, nil
}

// secretScanner is the output filter's secret scanning, for the proxy's
// data-loss checks (egress/dlp.go): the rules that find secrets in what
// a call sends out as an argument (argscan.go) find them in what its
// sandbox sends out through the proxy. It redacts whatever
// output_filter.disable_redaction says, as argScan's does: sending a
// secret out is not what that widening is about.
func secretScanner() (egress.Scanner, error) {
	f, err := outfilter.New(outfilter.Options{Redact: true, StripInvisible: true})
	if err != nil {
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	return func(s string) ([]string, error) {
		_, rep, err := f.Argument(s)
		return slices.Sorted(maps.Keys(rep.Redactions)), err
	}, nil
}

// bind gives the hub the guard that decides the callers' net:connect
// capabilities; until then every connection is refused.
func (h *egressHub) bind(g *guard.Guard) {
	if h != nil {
		h.guard.Store(g)
	}
}

// newCallID names one call; "" without a hub.
func (h *egressHub) newCallID() string {
	if h == nil {
		return ""
	}
	return h.prefix + strconv.FormatUint(h.seq.Add(1), 10)
}

type egressCallKey struct{}

// withCall puts the admitted call into ctx, for the runs of its tool.
func (h *egressHub) withCall(ctx context.Context, call guard.Call) context.Context {
	if h == nil {
		return ctx
	}
	return context.WithValue(ctx, egressCallKey{}, call)
}

// callOf is the call ctx runs for: the one withCall put there, or one
// made now from ctx's caller (a tool run outside the guard's middleware).
func (h *egressHub) callOf(ctx context.Context) guard.Call {
	if c, ok := ctx.Value(egressCallKey{}).(guard.Call); ok && c.CallID != "" {
		return c
	}
	return guard.Call{Tool: "-", Session: sessionID(ctx), Identity: identityOf(ctx), Claims: claimsOf(ctx), CallID: h.newCallID()}
}

// network compiles the block under key and returns how a run of it gets
// its way out: a Call of the proxy for the run's call, its connections
// decided by the block and the caller's net:connect capabilities, ended
// with the run. Credential values are read now, from the server's
// environment or files.
func (h *egressHub) network(key string, n configs.Network) (exec.NetworkFunc, error) {
	pol, err := egress.NewPolicy(key, n, os.Getenv)
	if err != nil {
		return nil, err
	}
	var ca []byte
	if len(n.Credentials) > 0 {
		ca = h.proxy.CAPEM() // trusted only by runs that have brokered hosts
	}
	env := placeholderEnv(n)
	return func(ctx context.Context, req *sandbox.Request) (func(), error) {
		g := h.guard.Load()
		if g == nil {
			return nil, toolerr.New(toolerr.BackendUnavailable, "Retry once the server has started.", "the egress proxy is not ready")
		}
		call := h.callOf(ctx)
		permitted := pol.WithPermit(func(host string, port uint16) (string, bool) { return g.PermitsConnect(call, host, port) })
		c := h.proxy.Call(call.CallID, permitted, egress.Limits{TotalTimeout: req.Limits.Timeout})
		h.calls.Store(call.CallID, &egressCall{call: call, key: key})
		req.Network = &sandbox.Network{Serve: func(l net.Listener) { _ = c.Serve(l) }, CACertPEM: ca}
		req.Env = append(req.Env, env...)
		return func() {
			c.Close() // waits for the connections' events
			h.calls.Delete(call.CallID)
		}, nil
	}, nil
}

// placeholderEnv is what a sandbox holds in place of each credential
// given by a variable: that variable, set to the placeholder.
func placeholderEnv(n configs.Network) []string {
	var env []string
	for _, c := range n.Credentials {
		if c.ValueEnv != "" {
			env = append(env, c.ValueEnv+"="+c.Placeholder)
		}
	}
	return env
}

// record writes one connection's audit line, linked to its call, and
// counts it. A line that cannot be written is logged: the connection is
// over by then.
func (h *egressHub) record(ev egress.Event) {
	ec, _ := h.calls.Load(ev.CallID)
	c, _ := ec.(*egressCall)
	e := audit.Entry{Session: "-", Tool: "-", ArgsSHA256: "-", Call: ev.CallID, Host: ev.Host, Port: int(ev.Port), Addr: ev.Addr,
		BytesUp: ev.BytesUp, BytesDown: ev.BytesDown, CredentialInjected: ev.CredentialInjected, Rule: ev.Rule, Code: ev.Finding,
		Outcome: audit.OutcomeEgressDenied, DurationMS: float64(ev.Duration.Microseconds()) / 1000}
	if c != nil {
		e.Session, e.Identity, e.Trusted, e.Tool = c.call.Session, c.call.Identity, c.call.Trusted, c.call.Tool
	}
	if ev.Allowed {
		e.Outcome = audit.OutcomeEgressAllowed
		if e.Rule == "" && c != nil {
			e.Rule = c.key + ".allow"
		}
	}
	if err := h.audit.Append(e); err != nil {
		h.log.Error("audit: an egress line was not written", "call", ev.CallID, "host", ev.Host, "err", err)
	}
	if h.metrics != nil {
		h.metrics(ev.Host, ev.Allowed, ev.Rule, ev.BytesUp, ev.BytesDown)
	}
}

// withExecNetwork gives run_script and run_command exec.network.
func withExecNetwork(env backendEnv, set *exec.Set) error {
	n := env.Config.Exec.Network
	if env.Egress == nil || !n.Enabled() {
		return nil
	}
	f, err := env.Egress.network("exec.network", n)
	if err != nil {
		return err
	}
	set.WithNetwork(f)
	return nil
}

// declaredNetworks gives each declared cli tool its own network block
// (tools[i].network); a tool without one has no network: declared tools
// do not inherit exec.network.
func declaredNetworks(env backendEnv) (func(configs.DeclaredTool) exec.NetworkFunc, error) {
	if env.Egress == nil {
		return nil, nil
	}
	byName := map[string]exec.NetworkFunc{}
	for i, t := range env.Config.Tools {
		if t.Type != configs.ToolCLI || !t.Network.Enabled() {
			continue
		}
		f, err := env.Egress.network(fmt.Sprintf("tools[%d].network", i), t.Network)
		if err != nil {
			return nil, err
		}
		byName[t.Name] = f
	}
	return func(t configs.DeclaredTool) exec.NetworkFunc { return byName[t.Name] }, nil
}
