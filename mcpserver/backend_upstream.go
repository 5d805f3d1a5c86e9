package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/upstream"
	"github.com/toolwarden/toolwarden/tools/upstream/pin"
)

// upstreamToolsets makes one toolset per configured upstream, named
// upstream:<name>, so that an upstream that cannot be reached is
// unavailable on its own, with its reason, and the others still serve.
func upstreamToolsets(cfg configs.Config) []toolset {
	out := make([]toolset, 0, len(cfg.Upstreams))
	sb := &upstreamSandbox{}
	for i, u := range cfg.Upstreams {
		set := &upstreamSet{}
		out = append(out, toolset{name: "upstream:" + u.Name, set: set, open: func(ctx context.Context, env backendEnv) (io.Closer, error) {
			opts, err := upstreamOptions(ctx, env, i, u, sb)
			if err != nil {
				return nil, err
			}
			return set.open(ctx, env, i, u, opts)
		}})
	}
	return out
}

// upstreamSandbox is the sandbox backend the sandboxed upstreams share,
// detected at the first one's start.
type upstreamSandbox struct {
	once    sync.Once
	starter sandbox.Starter
	err     error
}

func (sb *upstreamSandbox) get(ctx context.Context, cfg configs.Exec) (sandbox.Starter, error) {
	sb.once.Do(func() {
		var r sandbox.Runner
		r, sb.err = sandbox.Detect(ctx, sandbox.DetectOptions{Backend: cfg.Backend, RunscPath: cfg.RunscPath,
			BwrapPath: cfg.BwrapPath, StateDir: ExecStateDir(cfg)})
		if sb.err != nil {
			return
		}
		var ok bool
		if sb.starter, ok = r.(sandbox.Starter); !ok {
			sb.err = fmt.Errorf("the %s sandbox backend starts no long-lived process", r.Name())
		}
	})
	return sb.starter, sb.err
}

// upstreamOptions are how u is connected: for a sandboxed command
// upstream, the sandbox, the workspace as exec.workspace_writable says,
// exec.limits, and its network block's way out through the egress proxy
// (upstreams[i].network).
func upstreamOptions(ctx context.Context, env backendEnv, i int, u configs.Upstream, sb *upstreamSandbox) (upstream.Options, error) {
	opts := upstream.Options{Getenv: env.Config.Sources().Getenv, Secret: env.Config.Sources().Secret, Version: buildInfo.Version, Log: env.Log}
	if u.URL != "" || !u.Sandboxed() {
		return opts, nil
	}
	starter, err := sb.get(ctx, env.Config.Exec)
	if err != nil {
		return opts, fmt.Errorf("sandbox: true (the default) and no sandbox backend to run it in: %w", err)
	}
	l := env.Config.Exec.Limits
	opts.Sandbox = starter
	opts.Limits = sandbox.Limits{MemoryBytes: l.MemoryBytes, CPUs: l.CPUs, Pids: l.Pids, NoFile: l.NoFile, NProc: l.NProc,
		FileSize: l.FileSizeBytes, AddressSpace: l.AddressSpaceBytes, ScratchBytes: l.ScratchBytes}
	opts.WorkspaceWritable = env.Config.Exec.WorkspaceWritable
	if env.Workspace != nil {
		opts.Workspace = env.Workspace.Dir()
	} else if env.Config.Workspace != "" { // toolwarden pin
		opts.Workspace, _ = filepath.Abs(env.Config.Workspace)
	}
	if err := env.Egress.withUpstreamNetwork(&opts, i, u); err != nil {
		return opts, err
	}
	return opts, nil
}

// upstreamSet holds the tools of one upstream once it is connected, and
// again each time it lists them anew.
type upstreamSet struct {
	// relisting is held through a relisting, so that two (a restart and
	// a list_changed) apply their listings in the order they were read.
	relisting sync.Mutex
	mu        sync.Mutex
	tools     []tools.Tool
	withheld  []Unavailable
}

// Tools returns the upstream's offered tools, none before open.
func (s *upstreamSet) Tools() []tools.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

// Withheld lists the upstream's tools that are not offered, and why.
func (s *upstreamSet) Withheld() []Unavailable {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.withheld
}

func (s *upstreamSet) open(ctx context.Context, env backendEnv, i int, u configs.Upstream, opts upstream.Options) (io.Closer, error) {
	start := time.Now()
	conn, err := upstream.Connect(ctx, u, opts)
	if err != nil {
		return nil, err
	}
	started := time.Since(start) // spawned, initialized, listed
	changes, _ := env.Pins.check(u.Name, conn.Listing())
	offered, withheld, err := offerUpstream(env, i, u, conn.Tools(), conn.Withheld, changes)
	if err != nil {
		conn.Close()
		return nil, err
	}
	s.tools, s.withheld = offered, withheld
	relist := new(coalesced) // a flood of list_changed: one listing at a time, one more after
	conn.OnToolsChanged(func() { relist.do(func() { s.relist(env, i, u, conn) }) })
	conn.OnEvent(func(e upstream.Event) { upstreamEvent(env, i, e) })
	env.Log.Info("upstream", "upstream", u.Name, "server", conn.Server.Name, "server_version", conn.Server.Version,
		"tools", len(s.tools), "withheld", len(s.withheld), "sandbox", u.URL == "" && u.Sandboxed(),
		"started_in", started.Round(time.Millisecond))
	return conn, nil
}

// offerUpstream decides which of an upstream's listed tools are offered:
// not one whose name is taken, nor one whose definition is flagged
// (unless accept_flagged names it). A tool that drifted from its pin
// (changes, under block and trust_on_first_use) is kept, hidden: its
// calls are answered with denied.tool_drift. It returns the tools and
// those withheld, with the reasons, each logged.
func offerUpstream(env backendEnv, i int, u configs.Upstream, listed []tools.Tool, held []upstream.Withheld, changes []pin.Change) ([]tools.Tool, []Unavailable, error) {
	taken := reservedNames(env.Config)
	key := fmt.Sprintf("upstreams[%d]", i)
	var offered []tools.Tool
	var withheld []Unavailable
	refuse := func(key, tool, reason string) {
		env.Log.Warn("upstream tool withheld", "key", key, "upstream", u.Name, "tool", tool, "reason", reason)
		withheld = append(withheld, Unavailable{Toolset: "upstream:" + u.Name + " tool " + tool, Reason: key + ": " + reason})
	}
	drifted := map[string]bool{} // refused by their pins: hidden, calls get denied.tool_drift
	if env.Pins != nil && env.Pins.mode != configs.PinsWarn {
		for _, c := range changes {
			drifted[c.Tool] = true
			refuse("upstream_pins", c.Tool, fmt.Sprintf("%s since it was pinned (%s): its calls get %s until re-pinned with toolwarden pin",
				c.Kind, c.FieldNames(), toolerr.DeniedToolDrift))
		}
	}
	for _, w := range held {
		refuse(key, w.Tool, w.Reason)
	}
	names := slices.Collect(maps.Keys(taken))
	for _, t := range listed {
		names = append(names, t.Tool.Name)
	}
	check, err := newDefinitionCheck(env.Config, names)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range listed {
		own := strings.TrimPrefix(t.Tool.Name, u.Name+configs.UpstreamSep)
		if other, ok := taken[t.Tool.Name]; ok {
			refuse(key, own, "its name is also "+other)
			continue
		}
		if drifted[own] {
			// Its drift already withholds it, and its calls are answered
			// with what changed: that says more than the flags of a
			// definition nobody pinned.
			offered = append(offered, t)
			continue
		}
		findings, filtered := check.findings(t)
		if len(findings) > 0 && !slices.Contains(u.AcceptFlagged, own) {
			refuse(key, own, flagged(own, findings))
			continue
		}
		if len(findings) > 0 {
			env.Log.Warn("upstream tool offered though its definition is flagged (accept_flagged)", "key", key, "upstream", u.Name, "tool", own, "findings", findings)
			t = filtered
		}
		offered = append(offered, t)
	}
	return offered, withheld, nil
}

// upstreamEvent logs and audits a change of an upstream's process: it
// ended (why, and when it is restarted) or serves again.
func upstreamEvent(env backendEnv, i int, e upstream.Event) {
	tool := "upstream:" + e.Upstream
	switch e.Kind {
	case upstream.EventRestarted:
		env.Log.Info("upstream restarted; its tools are listed again", "upstream", e.Upstream)
		env.Pins.auditUpstream(tool, guard.OutcomeUpstreamRestarted, "upstream.restart", "")
		return
	case upstream.EventRequestRefused:
		env.Log.Warn("upstream request refused: toolwarden forwards no request from an upstream", "upstream", e.Upstream, "method", e.Reason)
		env.Pins.auditUpstream(tool, guard.OutcomeUpstreamRequestRefused, "upstream.requests:"+e.Reason, "")
		return
	case upstream.EventMessageRefused:
		rule := fmt.Sprintf("upstreams[%d].max_message_bytes", i)
		env.Log.Warn("upstream message refused: over the cap, cut unread", "upstream", e.Upstream, "rule", rule, "reason", e.Reason)
		env.Pins.auditUpstream(tool, guard.OutcomeUpstreamMessageRefused, rule, string(toolerr.BackendUnavailable))
		return
	case upstream.EventRestartFailed:
		env.Log.Warn("upstream restart failed", "upstream", e.Upstream, "reason", e.Reason, "retry_at", e.RetryAt)
		return
	}
	rule := "upstream.exited"
	if e.TooLarge {
		rule = fmt.Sprintf("upstreams[%d].max_message_bytes", i)
	}
	env.Log.Warn("upstream down: its calls get backend.unavailable until it is restarted", "upstream", e.Upstream,
		"rule", rule, "reason", e.Reason, "retry_at", e.RetryAt)
	env.Pins.auditUpstream(tool, guard.OutcomeUpstreamDown, rule, string(toolerr.BackendUnavailable))
}

// auditUpstream writes an upstream's audit line once the guard exists.
func (g *pinGate) auditUpstream(tool string, outcome guard.Outcome, rule, code string) {
	if g == nil {
		return
	}
	g.mu.Lock()
	gd := g.guard
	g.mu.Unlock()
	if gd == nil {
		return
	}
	if err := gd.Upstream(tool, outcome, rule, code); err != nil {
		g.log.Error("an upstream's state could not be audited", "tool", tool, "err", err)
	}
}

// relist reads the upstream's tools again after it was restarted or said
// they changed, compares them with their pins and offers them as open
// did: clients are then offered the new definitions (a tool added and
// allowed is listed, a changed one is refused as drift unless
// upstream_pins is warn) and are told with notifications/tools/list_changed.
func (s *upstreamSet) relist(env backendEnv, i int, u configs.Upstream, conn *upstream.Conn) {
	s.relisting.Lock()
	defer s.relisting.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), u.Timeout())
	defer cancel()
	listed, held, err := conn.Relist(ctx)
	if err != nil {
		env.Log.Warn("upstream said its tools changed but could not be listed again", "upstream", u.Name, "err", err)
		return
	}
	changes, hiddenChanged := env.Pins.check(u.Name, conn.Listing())
	offered, withheld, err := offerUpstream(env, i, u, listed, held, changes)
	if err != nil {
		env.Log.Warn("upstream tools listed again could not be checked; the earlier ones stay offered", "upstream", u.Name, "err", err)
		return
	}
	s.mu.Lock()
	add, del := offerChanges(s.tools, offered, env.Pins.hidden)
	s.tools, s.withheld = offered, withheld
	s.mu.Unlock()
	env.Log.Info("upstream listed again", "upstream", u.Name, "tools", len(offered), "withheld", len(withheld),
		"changed", len(add), "gone", len(del), "drift", len(changes))
	env.Pins.offer(add, del, hiddenChanged)
}

// offerChanges are the tools of now whose definition is new or differs
// from before's, and the names of before's that now lacks (but not those
// hidden as drift, which stay registered so that their calls are
// answered with denied.tool_drift).
func offerChanges(before, now []tools.Tool, hidden func(string) bool) (add []tools.Tool, del []string) {
	old := map[string][]byte{}
	for _, t := range before {
		old[t.Tool.Name], _ = json.Marshal(t.Tool)
	}
	for _, t := range now {
		def, _ := json.Marshal(t.Tool)
		if prev, ok := old[t.Tool.Name]; !ok || !bytes.Equal(prev, def) {
			add = append(add, t)
		}
		delete(old, t.Tool.Name)
	}
	for name := range old {
		if !hidden(name) {
			del = append(del, name)
		}
	}
	slices.Sort(del)
	return add, del
}

// reservedNames maps every built-in and declared tool name to what it is,
// for the collision check of upstream tools.
func reservedNames(cfg configs.Config) map[string]string {
	out := map[string]string{}
	for _, t := range Catalog(cfg) {
		out[t.Tool.Name] = "a built-in tool"
	}
	for i, t := range cfg.Tools {
		out[t.Name] = fmt.Sprintf("the declared tool tools[%d].name", i)
	}
	return out
}

// upstreamGrants are the capabilities granted by default: those of the
// upstream tools annotated read-only. An operator revokes them with
// capabilities.deny and grants more with capabilities.grant.
func upstreamGrants(toolset []tools.Tool) []string {
	var out []string
	for _, t := range toolset {
		if t.Meta.Toolset == upstream.Toolset && upstream.ReadOnly(t.Tool) {
			out = append(out, t.Meta.Capabilities...)
		}
	}
	return slices.Compact(out)
}
