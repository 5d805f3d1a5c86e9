package guard

import (
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/guard/outfilter"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// defaultFilter is the filter of a guard whose Config.OutputFilter is nil:
// the secure default, never no filter.
var defaultFilter = sync.OnceValue(func() *outfilter.Filter {
	f, err := outfilter.New(outfilter.DefaultOptions())
	if err != nil {
		panic(fmt.Sprintf("output filter: embedded rules do not load: %v", err))
	}
	return f
})

// filterOutput runs the output filter over a result, before the output
// cap, and returns the secrets it redacted, counted by rule. A result the
// filter cannot scan is not passed on: it becomes an error naming the rule.
func (g *Guard) filterOutput(res *mcp.CallToolResult) (*mcp.CallToolResult, map[string]int) {
	if res == nil {
		return nil, nil
	}
	out, rep, err := g.outputFilter().Result(res)
	if errors.Is(err, outfilter.ErrTooDense) {
		return toolerr.Result(toolerr.New(toolerr.LimitExceeded,
			"Ask for less at once: a smaller part of the file (offset/limit), a narrower path or pattern.",
			"the tool's output was withheld: %v (more than %d checks)", err, outfilter.MaxChecks).WithRule("output_filter.max_checks")), nil
	}
	if err != nil {
		return toolerr.Result(toolerr.New(toolerr.Internal, "",
			"the tool's output could not be filtered, so it was withheld: %v", err).WithRule("output_filter")), nil
	}
	return out, rep.Redactions
}

// keepMeta carries the filter's _meta report over to a result the output
// cap replaced, and its injection warning: the preview may hold the
// instruction-looking text, and a client that passes only content to the
// model must still tell it.
func keepMeta(capped, filtered *mcp.CallToolResult) *mcp.CallToolResult {
	if capped == filtered || filtered == nil {
		return capped
	}
	capped.Meta = mergeMeta(filtered.Meta, capped.Meta)
	if w, ok := outfilter.Warning(filtered); ok {
		capped.Content = append(capped.Content, w)
	}
	return capped
}

// mergeMeta is the filter's _meta with the capped result's own fields (its
// limit.exceeded error) over it.
func mergeMeta(filtered, own *mcp.Meta) *mcp.Meta {
	if filtered == nil || own == nil {
		if own == nil {
			return filtered
		}
		return own
	}
	out := &mcp.Meta{ProgressToken: filtered.ProgressToken, AdditionalFields: map[string]any{}}
	maps.Copy(out.AdditionalFields, filtered.AdditionalFields)
	maps.Copy(out.AdditionalFields, own.AdditionalFields)
	return out
}

// recordFinished writes a finished call's audit line, with the number of
// secrets the output filter redacted (by rule: the observer's detail) and
// what the call spent.
func (g *Guard) recordFinished(t *Ticket, outcome Outcome, code string, redactedBy map[string]int, spent *audit.Spend) error {
	e := entry(t.call, t.digest, "allowed", outcome, code, t.start)
	e.Capabilities, e.Spent = t.used(), spent
	for _, n := range redactedBy {
		e.Redactions += n
	}
	return g.appendRedacted(e, redactedBy)
}
