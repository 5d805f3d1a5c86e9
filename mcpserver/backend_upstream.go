package mcpserver

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/upstream"
)

// upstreamToolsets makes one toolset per configured upstream, named
// upstream:<name>, so that an upstream that cannot be reached is
// unavailable on its own, with its reason, and the others still serve.
func upstreamToolsets(cfg configs.Config) []toolset {
	out := make([]toolset, 0, len(cfg.Upstreams))
	for i, u := range cfg.Upstreams {
		set := &upstreamSet{}
		out = append(out, toolset{name: "upstream:" + u.Name, set: set, open: func(ctx context.Context, env backendEnv) (io.Closer, error) {
			return set.open(ctx, env, i, u)
		}})
	}
	return out
}

// upstreamSet holds the tools of one upstream once it is connected.
type upstreamSet struct {
	tools    []tools.Tool
	withheld []Unavailable
}

// Tools returns the upstream's offered tools, none before open.
func (s *upstreamSet) Tools() []tools.Tool { return s.tools }

// Withheld lists the upstream's tools that are not offered, and why.
func (s *upstreamSet) Withheld() []Unavailable { return s.withheld }

func (s *upstreamSet) open(ctx context.Context, env backendEnv, i int, u configs.Upstream) (io.Closer, error) {
	if u.URL == "" && u.Sandboxed() {
		// configs refuses this; never run an upstream unsandboxed that
		// the config asked to sandbox.
		return nil, &startupError{msg: fmt.Sprintf("upstreams[%d].sandbox: sandboxed upstreams are not built yet", i)}
	}
	conn, err := upstream.Connect(ctx, u, env.Config.Sources().Getenv, buildInfo.Version, env.Log)
	if err != nil {
		return nil, err
	}
	taken := reservedNames(env.Config)
	key := fmt.Sprintf("upstreams[%d]", i)
	changes, _ := env.Pins.check(u.Name, conn.Listing())
	if env.Pins != nil && env.Pins.mode != configs.PinsWarn {
		for _, c := range changes {
			s.refuse(env, "upstream_pins", u.Name, c.Tool, fmt.Sprintf("%s since it was pinned (%s): its calls get %s until re-pinned with toolwarden pin",
				c.Kind, c.FieldNames(), toolerr.DeniedToolDrift))
		}
	}
	conn.OnToolsChanged(func() { s.relist(env, u, conn) })
	for _, w := range conn.Withheld {
		s.refuse(env, key, u.Name, w.Tool, w.Reason)
	}
	names := slices.Collect(maps.Keys(taken))
	for _, t := range conn.Tools() {
		names = append(names, t.Tool.Name)
	}
	check, err := newDefinitionCheck(env.Config, names)
	if err != nil {
		conn.Close()
		return nil, err
	}
	for _, t := range conn.Tools() {
		own := strings.TrimPrefix(t.Tool.Name, u.Name+configs.UpstreamSep)
		if other, ok := taken[t.Tool.Name]; ok {
			s.refuse(env, key, u.Name, own, "its name is also "+other)
			continue
		}
		findings, filtered := check.findings(t)
		if len(findings) > 0 && !slices.Contains(u.AcceptFlagged, own) {
			s.refuse(env, key, u.Name, own, flagged(own, findings))
			continue
		}
		if len(findings) > 0 {
			env.Log.Warn("upstream tool offered though its definition is flagged (accept_flagged)", "key", key, "upstream", u.Name, "tool", own, "findings", findings)
			t = filtered
		}
		s.tools = append(s.tools, t)
	}
	env.Log.Info("upstream", "upstream", u.Name, "server", conn.Server.Name, "server_version", conn.Server.Version,
		"tools", len(s.tools), "withheld", len(s.withheld), "sandbox", false)
	return conn, nil
}

// relist reads the upstream's tools again after it said they changed,
// and compares them with their pins. The tools offered keep the
// definitions read at start (until restart); a changed one is refused
// (block, trust_on_first_use) or runs with a warning (warn).
func (s *upstreamSet) relist(env backendEnv, u configs.Upstream, conn *upstream.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), u.Timeout())
	defer cancel()
	if _, err := conn.List(ctx); err != nil {
		env.Log.Warn("upstream said its tools changed but could not be listed again", "upstream", u.Name, "err", err)
		return
	}
	env.Pins.relisted(u.Name, conn.Listing())
}

// refuse withholds one upstream tool, logged and reported by config check.
func (s *upstreamSet) refuse(env backendEnv, key, name, tool, reason string) {
	env.Log.Warn("upstream tool withheld", "key", key, "upstream", name, "tool", tool, "reason", reason)
	s.withheld = append(s.withheld, Unavailable{Toolset: "upstream:" + name + " tool " + tool, Reason: key + ": " + reason})
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
