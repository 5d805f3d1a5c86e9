package main

import (
	"fmt"
	"os"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/tools/declared"

	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/mcpserver"
)

func newPolicyCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "policy", Short: "Inspect the policy"}
	f := &configFlags{}
	var asJSON, trusted bool
	var as string
	explain := &cobra.Command{
		Use:   "explain TOOL [ARGS_JSON]",
		Short: "Say whether a call would be allowed, and by which rules, without running it",
		Long: `Decide a call with the effective config exactly as serve's guard would (the
same decision code: tool, policy, trust, capabilities, limits, arguments),
without running it, counting it against limits or writing an audit line.
Print the outcome, every rule applied in order, and what was missing.
With --as, decide for that caller, under the identities rules that match
it: a static identity's name (ci, token-<digest>), an OAuth subject
(alice), or claims as key=value pairs separated by commas: sub, client_id,
group, scope, identity (group and scope may repeat), e.g.
--as 'sub=alice,group=contractors,scope=mcp:tools'.
Exit status: 0 allowed, 2 denied, 3 needs approval, 1 could not decide.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			mcpserver.OneShotGC()
			l, raw, err := f.loadCall(cmd, args)
			if err != nil {
				return err
			}
			v, err := mcpserver.ExplainPolicy(cmd.Context(), l,
				mcpserver.ExplainRequest{Tool: args[0], Args: raw, Trusted: trusted, As: as, JSON: asJSON}, os.Stdout)
			if err != nil {
				return err
			}
			return outcomeStatus(v)
		},
	}
	f.register(explain)
	explain.Flags().BoolVar(&asJSON, "json", false, "print the decision as JSON")
	explain.Flags().BoolVar(&trusted, "trusted", false, "decide as for toolwarden call --trusted")
	explain.Flags().StringVar(&as, "as", "", "decide for this caller: an identity name, an OAuth subject, or claims (sub=...,client_id=...,group=...,scope=...)")
	cmd.AddCommand(explain, newPolicyDiffCmd())
	return cmd
}

// exitUnusable is policy diff's status when a config cannot be loaded.
const exitUnusable = 2

func newPolicyDiffCmd() *cobra.Command {
	var asJSON, failOnWidening bool
	cmd := &cobra.Command{
		Use:   "diff OLD.yaml NEW.yaml",
		Short: "List what NEW allows that OLD did not (widenings), and what it narrows",
		Long: `Compare two config files, each a full config over the embedded defaults,
with the guard's own decision code: for every caller (the local client,
every named token, a caller of each identities rule) and every tool
either config defines (built-in and declared), whether the tool is
offered and under which approval mode; then capability grants and
denials, limits, output filter and secret-file switches, exec, HTTP and
metrics widenings, and upstreams (by their config: listing their tools
needs a connection). Nothing is opened, connected or run.
Exit status: 0, or with --fail-on-widening 1 when NEW widens anything;
2 when a file cannot be loaded (file:line: key: reason).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var loaded [2]*configs.Loaded
			for i, file := range args {
				l, err := configs.Load(configs.Options{File: file, CheckTool: declared.Check})
				if err != nil {
					return &exitError{exitUnusable, err.Error()}
				}
				loaded[i] = l
			}
			d, err := mcpserver.DiffPolicy(loaded[0], loaded[1], asJSON, os.Stdout)
			if err != nil {
				return err
			}
			if failOnWidening && len(d.Widenings) > 0 {
				return &exitError{1, fmt.Sprintf("%s widens %s in %d places", args[1], args[0], len(d.Widenings))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the diff as JSON")
	cmd.Flags().BoolVar(&failOnWidening, "fail-on-widening", false, "exit 1 when NEW widens anything (for CI)")
	return cmd
}

// outcomeStatus turns a decision into the command's exit status.
func outcomeStatus(v mcpserver.Verdict) error {
	switch {
	case v.Allowed():
		return nil
	case v.NeedsApproval():
		return &exitError{exitNeedsApproval, "the call needs approval (rule " + v.Rule + ")"}
	}
	return &exitError{exitDenied, "the call would be denied (rule " + v.Rule + ")"}
}
