package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/oauth"
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
			raw, err := argsJSON(args)
			if err != nil {
				return err
			}
			l, err := f.load(cmd)
			if err != nil {
				return err
			}
			b, err := mcpserver.Build(cmd.Context(), oneShot(l.Config), audit.Discard{}, version, newLogger("error"))
			if err != nil {
				return err
			}
			defer b.Close()
			ctx := cmd.Context()
			if as != "" {
				identity, claims, err := parseAs(as, l.Config)
				if err != nil {
					return err
				}
				ctx = mcpserver.AsCaller(ctx, identity, claims)
			}
			d := b.Explain(ctx, args[0], raw, trusted)
			if asJSON {
				err = printJSON(explanationOf(args[0], d))
			} else {
				printExplanation(os.Stdout, args[0], d)
			}
			if err != nil {
				return err
			}
			return outcomeStatus(d)
		},
	}
	f.register(explain)
	explain.Flags().BoolVar(&asJSON, "json", false, "print the decision as JSON")
	explain.Flags().BoolVar(&trusted, "trusted", false, "decide as for toolwarden call --trusted")
	explain.Flags().StringVar(&as, "as", "", "decide for this caller: an identity name, an OAuth subject, or claims (sub=...,client_id=...,group=...,scope=...)")
	cmd.AddCommand(explain)
	return cmd
}

// explanation is the --json form of a decision.
type explanation struct {
	Tool    string        `json:"tool"`
	Outcome audit.Outcome `json:"outcome"`
	Rule    string        `json:"rule"`
	Code    string        `json:"code,omitempty"`
	Message string        `json:"message,omitempty"`
	Hint    string        `json:"hint,omitempty"`
	Missing string        `json:"missing,omitempty"`
	Trace   []guard.Step  `json:"trace"`
}

func explanationOf(tool string, d guard.Decision) explanation {
	e := explanation{Tool: tool, Outcome: d.Outcome, Rule: d.Rule, Missing: d.Missing, Trace: d.Trace}
	if d.Err != nil {
		e.Code, e.Message, e.Hint = string(d.Err.Code), d.Err.Message, d.Err.Hint
	}
	return e
}

func printExplanation(w io.Writer, tool string, d guard.Decision) {
	fmt.Fprintf(w, "%s: %s (rule %s)\n", tool, d.Outcome, d.Rule)
	for i, s := range d.Trace {
		fmt.Fprintf(w, "  %d. %-13s %-15s %s", i+1, s.Check, s.Outcome, s.Rule)
		if s.Detail != "" {
			fmt.Fprintf(w, " — %s", s.Detail)
		}
		fmt.Fprintln(w)
	}
	if d.Missing != "" {
		fmt.Fprintf(w, "missing: %s\n", d.Missing)
	}
	if d.Err != nil {
		fmt.Fprintf(w, "code: %s\nhint: %s\n", d.Err.Code, d.Err.Hint)
	}
}

// outcomeStatus turns a decision into the command's exit status.
func outcomeStatus(d guard.Decision) error {
	switch d.Outcome {
	case guard.Allow:
		return nil
	case guard.NeedsApproval:
		return &exitError{exitNeedsApproval, "the call needs approval (rule " + d.Rule + ")"}
	}
	return &exitError{exitDenied, "the call would be denied (rule " + d.Rule + ")"}
}

// parseAs reads --as: a static identity's name, an OAuth subject, or
// key=value claims. A subject's identity is the one its tokens would get
// from http.oauth.issuer.
func parseAs(as string, cfg configs.Config) (string, guard.Claims, error) {
	var c guard.Claims
	identity := ""
	if !strings.Contains(as, "=") {
		if as == mcpserver.LocalIdentity || strings.HasPrefix(as, "token-") || slices.ContainsFunc(cfg.HTTP.Identities,
			func(id configs.HTTPIdentity) bool { return id.Name == as }) {
			return as, c, nil
		}
		as = "sub=" + as
	}
	for _, kv := range strings.Split(as, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || v == "" {
			return "", c, fmt.Errorf("--as: %q is not key=value", kv)
		}
		switch k {
		case "sub":
			c.Subject = v
		case "client_id":
			c.ClientID = v
		case "group":
			c.Groups = append(c.Groups, v)
		case "scope":
			c.Scopes = append(c.Scopes, strings.Fields(v)...)
		case "identity":
			identity = v
		default:
			return "", c, fmt.Errorf("--as: unknown key %q (sub, client_id, group, scope, identity)", k)
		}
	}
	if identity == "" && c.Subject != "" {
		identity = oauth.Principal{Subject: c.Subject, Issuer: cfg.HTTP.OAuth.Issuer}.Name()
	}
	if identity == "" {
		identity = "explain"
	}
	return identity, c, nil
}
