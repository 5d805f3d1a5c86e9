package outfilter

// WithToolNames is a filter like f whose tool names are names: the server
// offers tools listed after start (an upstream's), and text asking to
// call one of them is to be flagged as for the tools offered at start. A
// nil f stands for the secure default. The new filter compiles at its
// first use, as New's does; f is unchanged.
func (f *Filter) WithToolNames(names []string) *Filter {
	o := DefaultOptions()
	if f != nil {
		o = f.opts
	}
	o.ToolNames = append([]string(nil), names...)
	return &Filter{opts: o}
}
