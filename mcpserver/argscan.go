package mcpserver

import (
	"maps"
	"slices"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/guard/outfilter"
)

// argScan is the guard's argument scanning from the config (arguments.*).
// It shares the output filter when that redacts; with
// output_filter.disable_redaction, arguments still get a filter that finds
// secrets, as sending one out is not what that widening is about.
func argScan(cfg configs.Config, output *outfilter.Filter, names []string) (guard.ArgScan, error) {
	f := output
	if cfg.OutputFilter.DisableRedaction {
		var err error
		if f, err = outfilter.New(outfilter.Options{Redact: true, StripInvisible: true,
			Markers: cfg.OutputFilter.InjectionMarkers, ToolNames: names}); err != nil {
			return guard.ArgScan{}, err
		}
	}
	a := guard.DefaultArgScan(f)
	refs, err := guard.NewSecretRefs(cfg.Capabilities.SecretGlobs())
	if err != nil {
		return guard.ArgScan{}, err
	}
	a.SecretFiles = refs
	if cfg.Arguments.Secrets != "" {
		a.Secrets = cfg.Arguments.Secrets
	}
	if cfg.Arguments.Markers != "" {
		a.Markers = cfg.Arguments.Markers
	}
	a.Tools = make(map[string]guard.ArgRule, len(cfg.Arguments.Tools))
	for g, r := range cfg.Arguments.Tools {
		a.Tools[g] = guard.ArgRule{Secrets: r.Secrets, Markers: r.Markers}
	}
	return a, nil
}

// argRank orders the argument modes from narrowest to widest ("" is the
// default's rank), for policy diff.
func argRank(mode, def string) int {
	if mode == "" {
		mode = def
	}
	return map[string]int{"refuse": 0, "redact": 1, "flag": 1, "allow": 2}[mode]
}

// diffArguments files the argument rules (arguments.*) that let more, or
// less, through.
func (d *PolicyDiff) diffArguments(o, n configs.Arguments) {
	mode := func(key, old, new, def string) {
		if argRank(old, def) != argRank(new, def) {
			d.add(argRank(old, def), argRank(new, def), Change{Kind: "arguments", Item: key, Old: orDefault(old, def), New: orDefault(new, def)})
		}
	}
	mode("arguments.secrets", o.Secrets, n.Secrets, "refuse")
	mode("arguments.markers", o.Markers, n.Markers, "flag")
	globs := map[string]bool{}
	for g := range o.Tools {
		globs[g] = true
	}
	for g := range n.Tools {
		globs[g] = true
	}
	for _, g := range slices.Sorted(maps.Keys(globs)) {
		mode("arguments.tools."+g+".secrets", o.Tools[g].Secrets, n.Tools[g].Secrets, orDefault(n.Secrets, "refuse"))
		mode("arguments.tools."+g+".markers", o.Tools[g].Markers, n.Tools[g].Markers, orDefault(n.Markers, "flag"))
	}
}

// diffTaint files a change of policy.taint: refuse is the narrowest,
// off the widest.
func (d *PolicyDiff) diffTaint(o, n string) {
	rank := map[string]int{"refuse": 0, "approve": 1, "off": 2}
	o, n = orDefault(o, "approve"), orDefault(n, "approve")
	if rank[o] != rank[n] {
		d.add(rank[o], rank[n], Change{Kind: "policy", Item: "policy.taint", Old: o, New: n})
	}
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
