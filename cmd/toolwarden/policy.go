package main

import (
	"os"

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
	cmd.AddCommand(explain)
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
