package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/lazyregexp"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
)

// MaxNameLength is the longest namespaced tool name offered: several
// clients refuse longer ones.
const MaxNameLength = 64

// toolName is what an upstream's own tool name may be.
var toolName = lazyregexp.New(`^[A-Za-z0-9_.-]{1,128}$`)

// Name is the namespaced name of upstream's tool.
func Name(upstream, tool string) string { return upstream + configs.UpstreamSep + tool }

// Capability is the capability a call of upstream's tool needs.
func Capability(upstream, tool string) string { return "mcp:call:" + upstream + "/" + tool }

// ReadOnly reports whether the upstream annotates t read-only.
func ReadOnly(t mcp.Tool) bool {
	h := t.Annotations.ReadOnlyHint
	return h != nil && *h
}

// build turns the listed tools into tools.Tools, withholding those whose
// name or schema toolwarden cannot offer safely.
func (c *Conn) build(listed []mcp.Tool) ([]tools.Tool, []Withheld) {
	var out []tools.Tool
	var withheld []Withheld
	defs := c.Listing().Tools
	for _, lt := range listed {
		t, err := c.tool(lt, json.RawMessage(defs[lt.Name].Definition))
		if err != nil {
			withheld = append(withheld, Withheld{Tool: lt.Name, Reason: err.Error()})
			continue
		}
		out = append(out, t)
	}
	return out, withheld
}

// tool builds the tools.Tool of lt, whose definition as listed is def.
func (c *Conn) tool(lt mcp.Tool, def json.RawMessage) (tools.Tool, error) {
	name := Name(c.cfg.Name, lt.Name)
	if !toolName.MatchString(lt.Name) {
		return tools.Tool{}, fmt.Errorf("its name %q is not [A-Za-z0-9_.-]{1,128}", lt.Name)
	}
	if len(name) > MaxNameLength {
		return tools.Tool{}, fmt.Errorf("its namespaced name %q is %d characters, over %d", name, len(name), MaxNameLength)
	}
	schema, err := inputSchema(def)
	if err != nil {
		return tools.Tool{}, err
	}
	t := mcp.Tool{Name: name, Title: lt.Title, Description: lt.Description, RawInputSchema: schema, Annotations: annotations(lt.Annotations)}
	readOnly := ReadOnly(lt)
	meta := tools.Meta{Toolset: Toolset, Capabilities: []string{Capability(c.cfg.Name, lt.Name)}, RequiresApproval: !readOnly}
	return tools.Tool{Tool: t, Handler: c.forward(lt.Name), Meta: meta}, nil
}

// annotations are the upstream's hints with every one set explicitly,
// unset ones at the MCP defaults (not read-only, destructive, not
// idempotent, open-world). They are hints for the client; the guard
// decides by Meta.
func annotations(a mcp.ToolAnnotation) mcp.ToolAnnotation {
	or := func(p *bool, def bool) *bool {
		if p != nil {
			def = *p
		}
		return &def
	}
	return mcp.ToolAnnotation{Title: a.Title, ReadOnlyHint: or(a.ReadOnlyHint, false), DestructiveHint: or(a.DestructiveHint, true),
		IdempotentHint: or(a.IdempotentHint, false), OpenWorldHint: or(a.OpenWorldHint, true)}
}

// inputSchema is the upstream's input schema, from its definition as
// listed (every keyword, which mcp-go's decoded struct would drop), as
// the guard will validate it: an object schema, strict
// (additionalProperties false unless the upstream says otherwise), that
// compiles.
func inputSchema(def json.RawMessage) (json.RawMessage, error) {
	var d struct {
		InputSchema map[string]any `json:"inputSchema"`
	}
	if err := json.Unmarshal(def, &d); err != nil || d.InputSchema == nil {
		return nil, fmt.Errorf("its inputSchema is not a JSON object")
	}
	s := d.InputSchema
	if s["type"] != "object" {
		return nil, fmt.Errorf("its inputSchema is of type %v, not object", quote(s["type"]))
	}
	if _, ok := s["additionalProperties"]; !ok {
		s["additionalProperties"] = false
	}
	if _, ok := s["properties"]; !ok {
		s["properties"] = map[string]any{}
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("its inputSchema does not encode: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err == nil {
		comp := jsonschema.NewCompiler()
		if err = comp.AddResource("toolwarden:///upstream.json", doc); err == nil {
			_, err = comp.Compile("toolwarden:///upstream.json")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("its inputSchema does not compile: %w", err)
	}
	return raw, nil
}

// quote is v as JSON, for an error message.
func quote(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// forward returns the handler that calls tool on the upstream with the
// arguments the guard validated, under the call's context, and returns
// its result as it came.
func (c *Conn) forward(tool string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := req.Params.RawArguments
		if len(args) == 0 {
			raw, err := json.Marshal(req.Params.Arguments)
			if err != nil {
				return nil, err
			}
			args = raw
		}
		s, out := c.session()
		if s == nil {
			return toolerr.Result(unavailable(c.cfg.Name, out)), nil
		}
		ctx, note := withCapNote(ctx)
		res, err := s.callTool(ctx, tool, args)
		if err != nil {
			return toolerr.Result(callError(ctx, c.cfg.Name, s.explain(cutOr(note, err)))), nil
		}
		if e := unfinished(c.cfg.Name, res); e != nil {
			return toolerr.Result(e), nil
		}
		return res, nil
	}
}

// unfinished refuses a result that is not the tool's answer: 2026-07-28's
// input_required, whose inputRequests (elicitation, sampling, roots) and
// requestState would go on to the client as toolwarden's own, their text
// past the output filter. An upstream's requests to the client are
// refused, however it sends them.
func unfinished(upstream string, res *mcp.CallToolResult) *toolerr.Error {
	if res == nil || (res.ResultType == "" || res.ResultType == mcp.ResultTypeComplete) &&
		len(res.InputRequests) == 0 && res.RequestState == "" {
		return nil
	}
	return toolerr.New(toolerr.BackendDenied, "The upstream server asked the client for input, which toolwarden does not pass on; call the tool with everything it needs.",
		"upstream %q answered with a result of type %q that asks the client for input; toolwarden refuses an upstream's requests to the client", upstream, res.ResultType).
		WithRule("upstreams.requests")
}

// callError says what became of a call the upstream did not answer.
func callError(ctx context.Context, upstream string, err error) *toolerr.Error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return toolerr.New(toolerr.Timeout, "The upstream server did not answer in time; try a smaller request or later.",
			"upstream %q did not answer before the call's deadline", upstream)
	case ctx.Err() != nil:
		return toolerr.New(toolerr.Canceled, "", "the call was cancelled")
	}
	var large *MessageTooLargeError
	if errors.As(err, &large) {
		return toolerr.New(toolerr.BackendUnavailable, "The upstream server's answer was over toolwarden's size limit; ask for less (a smaller range, fewer items).",
			"upstream %q: %v", upstream, err)
	}
	var te *transport.Error
	if errors.As(err, &te) || errors.Is(err, errEnded) || errors.Is(err, transport.ErrTransportClosed) {
		return toolerr.New(toolerr.BackendUnavailable, "The upstream server is not reachable; try again later.",
			"upstream %q: %v", upstream, err)
	}
	return toolerr.New(toolerr.BackendDenied, "The upstream server refused the call; check the arguments against its description.",
		"upstream %q answered with a protocol error: %v", upstream, err)
}
