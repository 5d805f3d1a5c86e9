package outfilter

import "slices"

// WithMoreToolNames is a filter like f that also flags text asking to
// call one of names (tools an upstream listed after start) as it does for
// its own tool names, which it keeps: the names it had at start (tools
// the policy hides, an upstream's resources item) stay watched. It is f
// itself when f watches for every one of names already. A nil f stands
// for the secure default. A new filter compiles at its first use, as
// New's does; f is unchanged.
func (f *Filter) WithMoreToolNames(names []string) *Filter {
	o := DefaultOptions()
	if f != nil {
		o = f.opts
	}
	if f != nil && !slices.ContainsFunc(names, func(n string) bool { return !slices.Contains(o.ToolNames, n) }) {
		return f
	}
	all := append(slices.Clone(o.ToolNames), names...)
	slices.Sort(all)
	o.ToolNames = slices.Compact(all)
	return &Filter{opts: o}
}
