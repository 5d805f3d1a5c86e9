package mcpserver

import (
	"slices"
	"strconv"
	"strings"

	"github.com/toolwarden/toolwarden/configs"
)

// pinRank orders upstream_pins modes from the strictest: block refuses
// a changed tool, trust_on_first_use also pins a first listing unseen,
// warn runs a changed tool.
func pinRank(mode string) int {
	switch mode {
	case configs.PinsWarn:
		return 2
	case configs.PinsTrustOnFirstUse:
		return 1
	}
	return 0
}

// diffUpstreams compares the upstreams by name: one NEW adds (or points
// at another server) widens, as do an unsandboxed run, more
// accept_flagged tools, policy.allow globs that can name its tools, and
// a weaker pin mode. Their tools are not listed: that needs a connection.
func (d *PolicyDiff) diffUpstreams(o, n configs.Config) {
	d.add(pinRank(o.PinsMode()), pinRank(n.PinsMode()), Change{Kind: "upstream", Item: "upstream_pins",
		Old: o.PinsMode(), New: n.PinsMode()})
	olds := map[string]configs.Upstream{}
	for _, u := range o.Upstreams {
		olds[u.Name] = u
	}
	news := map[string]bool{}
	for _, u := range n.Upstreams {
		news[u.Name] = true
		item := "upstreams[" + u.Name + "]"
		was, ok := olds[u.Name]
		switch {
		case !ok:
			d.Widenings = append(d.Widenings, Change{Kind: "upstream", Item: item, Old: "absent", New: upstreamTarget(u)})
		case upstreamTarget(was) != upstreamTarget(u):
			d.Widenings = append(d.Widenings, Change{Kind: "upstream", Item: item, Old: upstreamTarget(was), New: upstreamTarget(u)})
		}
		if ok {
			d.add(b2i(!was.Sandboxed()), b2i(!u.Sandboxed()), Change{Kind: "upstream", Item: item + ".sandbox",
				Old: strconv.FormatBool(was.Sandboxed()), New: strconv.FormatBool(u.Sandboxed())})
		}
		d.list("upstream", item+".accept_flagged", was.AcceptFlagged, u.AcceptFlagged, true)
		d.list("upstream", item+" tools allowed by policy.allow", upstreamGlobs(o, u.Name), upstreamGlobs(n, u.Name), true)
	}
	for _, u := range o.Upstreams {
		if !news[u.Name] {
			d.Narrowings = append(d.Narrowings, Change{Kind: "upstream", Item: "upstreams[" + u.Name + "]", Old: upstreamTarget(u), New: "absent"})
		}
	}
}

// upstreamTarget names the server an upstream runs or reaches.
func upstreamTarget(u configs.Upstream) string {
	if u.URL != "" {
		return u.URL
	}
	return strings.Join(u.Command, " ")
}

// upstreamGlobs are the policy.allow globs of cfg that can name a tool
// of the upstream (<name>__<tool>): their literal start and the prefix
// agree. policy.deny is left out, so the list errs towards widening.
func upstreamGlobs(cfg configs.Config, name string) []string {
	prefix := name + "__"
	var out []string
	for _, g := range cfg.Policy.Allow {
		lit := g
		if i := strings.IndexAny(g, "*?[{\\"); i >= 0 {
			lit = g[:i]
		} else if !strings.HasPrefix(g, prefix) {
			continue
		}
		if strings.HasPrefix(lit, prefix) || strings.HasPrefix(prefix, lit) {
			out = append(out, g)
		}
	}
	return slices.Compact(out)
}
