package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/oauth"
)

// ExplainRequest is the call policy explain decides, and how it prints.
type ExplainRequest struct {
	Tool    string
	Args    json.RawMessage
	Trusted bool   // decide as for an operator call (call --trusted)
	As      string // the caller, as --as takes it; empty for the local one
	JSON    bool   // print the decision as JSON (Explanation)
}

// Verdict is a decision's outcome, for the exit status, and its rule.
type Verdict struct {
	Outcome audit.Outcome // guard.Allow, guard.NeedsApproval or a denial
	Rule    string
}

// Allowed reports whether the call would run.
func (v Verdict) Allowed() bool { return v.Outcome == guard.Allow }

// NeedsApproval reports whether the call would wait for a human.
func (v Verdict) NeedsApproval() bool { return v.Outcome == guard.NeedsApproval }

// ExplainPolicy decides req under l's config exactly as Serve's guard
// would, without running the call, counting it against limits or writing
// an audit line, and writes the decision to w: the outcome and every rule
// applied in order, or with req.JSON the Explanation.
func ExplainPolicy(ctx context.Context, l *configs.Loaded, req ExplainRequest, w io.Writer) (Verdict, error) {
	b, err := Build(withProbe(ctx, probeLater), oneShot(l.Config), audit.Discard{}, buildInfo.Version, NewLogger("error"))
	if err != nil {
		return Verdict{}, err
	}
	defer b.Close()
	if req.As != "" {
		identity, claims, err := parseAs(req.As, l.Config)
		if err != nil {
			return Verdict{}, err
		}
		ctx = AsCaller(ctx, identity, claims)
	}
	d := b.Explain(ctx, req.Tool, req.Args, req.Trusted)
	net := b.explainNetwork(ctx, l.Config, req.Tool, req.Args, req.Trusted)
	if req.JSON {
		e := explanationOf(req.Tool, d)
		e.Network = net
		err = writeJSON(w, e)
	} else {
		printExplanation(w, req.Tool, d)
		printNetwork(w, net, d)
	}
	return Verdict{Outcome: d.Outcome, Rule: d.Rule}, err
}

// Explanation is the JSON form of a decision (policy explain --json).
type Explanation struct {
	Tool    string        `json:"tool"`
	Outcome audit.Outcome `json:"outcome"`
	Rule    string        `json:"rule"`
	Code    string        `json:"code,omitempty"`
	Message string        `json:"message,omitempty"`
	Hint    string        `json:"hint,omitempty"`
	Missing string        `json:"missing,omitempty"`
	// Answer says how a denied call is answered: a tools/call result, or
	// (a tool that does not exist) the JSON-RPC error -32602.
	Answer string       `json:"answer,omitempty"`
	Trace  []guard.Step `json:"trace"`
	// Network is, for a tool with network, the hosts of its allow list
	// and whether this caller's net:connect lets a run reach each.
	Network *NetworkReach `json:"network,omitempty"`
}

// unknownToolAnswer is how a call to a tool that does not exist is
// answered. The MCP specification lists unknown tools among protocol
// errors, and mcp-go answers them before any handler runs: the client
// asked for a tool tools/list never offered. A tool that exists but the
// policy hides gets a denied.not_allowed result and an audit line.
const unknownToolAnswer = "JSON-RPC error -32602 (unknown tool), not a tools/call result: the MCP specification lists unknown tools among protocol errors"

// answerOf says how a call decided d is answered ("" when it runs).
func answerOf(d guard.Decision) string {
	switch {
	case d.Rule == "tool.known" && d.Err != nil:
		return unknownToolAnswer
	case d.Err != nil:
		return "tools/call result with isError: true, code " + string(d.Err.Code)
	}
	return ""
}

// explanationOf is d in its JSON form.
func explanationOf(tool string, d guard.Decision) Explanation {
	e := Explanation{Tool: tool, Outcome: d.Outcome, Rule: d.Rule, Missing: d.Missing, Answer: answerOf(d), Trace: d.Trace}
	if d.Err != nil {
		e.Code, e.Message, e.Hint = string(d.Err.Code), d.Err.Message, d.Err.Hint
	}
	return e
}

// printExplanation writes d as policy explain prints it: the outcome, the
// rules applied in order, what was missing, and the error's code and hint.
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
		fmt.Fprintf(w, "code: %s\nhint: %s\nanswer: %s\n", d.Err.Code, d.Err.Hint, answerOf(d))
	}
}

// parseAs reads --as: a static identity's name, an OAuth subject, or
// key=value claims. A subject's identity is the one its tokens would get
// from http.oauth.issuer.
func parseAs(as string, cfg configs.Config) (string, guard.Claims, error) {
	var c guard.Claims
	identity := ""
	if !strings.Contains(as, "=") {
		if as == LocalIdentity || strings.HasPrefix(as, "token-") || slices.ContainsFunc(cfg.HTTP.Identities,
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
