package mcpserver

import (
	"fmt"
	"io"

	"github.com/toolwarden/toolwarden/configs"
)

// DiffPolicy compares the configs of old and new (each a full config over
// the embedded defaults, as configs.Load reads it) and writes what new
// allows that old did not, and what it narrows, to w: as text, or with
// asJSON as a PolicyDiff. Nothing is opened, connected or run.
func DiffPolicy(old, new *configs.Loaded, asJSON bool, w io.Writer) (PolicyDiff, error) {
	d, err := diffPolicy(old.Config, new.Config)
	if err != nil {
		return d, err
	}
	d.Old, d.New = old.File, new.File
	if d.Widenings == nil {
		d.Widenings = []Change{}
	}
	if d.Narrowings == nil {
		d.Narrowings = []Change{}
	}
	if asJSON {
		return d, writeJSON(w, d)
	}
	printDiff(w, d)
	return d, nil
}

// printDiff writes d as policy diff prints it.
func printDiff(w io.Writer, d PolicyDiff) {
	fmt.Fprintf(w, "policy diff %s -> %s\n", d.Old, d.New)
	fmt.Fprintf(w, "compared: %d tools for %d callers (%v)\n", d.Tools, len(d.Callers), d.Callers)
	section := func(title, mark string, cs []Change) {
		fmt.Fprintf(w, "%s: %d\n", title, len(cs))
		for _, c := range cs {
			fmt.Fprintf(w, "  %s %-13s", mark, c.Kind)
			if c.Caller != "" {
				fmt.Fprintf(w, " %s:", c.Caller)
			}
			fmt.Fprintf(w, " %s: %s -> %s", c.Item, c.Old, c.New)
			if c.Rule != "" {
				fmt.Fprintf(w, " (rule %s)", c.Rule)
			}
			fmt.Fprintln(w)
		}
	}
	section("widenings", "+", d.Widenings)
	section("narrowings", "-", d.Narrowings)
	for _, n := range d.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
