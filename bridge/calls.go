package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"google.golang.org/genai"
)

// maxParallel bounds the calls run at once with --parallel, whatever the
// number the model asks for in one turn.
const maxParallel = 4

// runCalls runs the function calls of a model turn and returns the user
// turn holding their responses, in call order with the calls' IDs; nil
// when the turn has no calls.
func (b *Bridge) runCalls(ctx context.Context, turn *genai.Content) *genai.Content {
	var calls []*genai.FunctionCall
	for _, p := range turn.Parts {
		if p.FunctionCall != nil {
			calls = append(calls, p.FunctionCall)
		}
	}
	if len(calls) == 0 {
		return nil
	}
	parts := make([]*genai.Part, len(calls))
	for i := 0; i < len(calls); {
		j := i + 1
		if b.opts.Parallel && b.tools.ReadOnly(calls[i].Name) {
			for j < len(calls) && j-i < maxParallel && b.tools.ReadOnly(calls[j].Name) {
				j++
			}
		}
		var wg sync.WaitGroup
		for k := i; k < j; k++ {
			wg.Go(func() {
				resp := b.restricted(calls[k].Name)
				if resp == nil {
					resp = b.call(ctx, calls[k].Name, calls[k].Args)
				}
				parts[k] = &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: calls[k].ID, Name: calls[k].Name, Response: resp}}
			})
		}
		wg.Wait()
		i = j
	}
	return &genai.Content{Role: genai.RoleUser, Parts: parts}
}

// restricted answers a call that --allowed-tools or --calling-mode none
// rules out, whatever the response asked for; nil when it may run.
func (b *Bridge) restricted(name string) map[string]any {
	switch {
	case strings.EqualFold(b.opts.CallingMode, "none"):
		fmt.Fprintf(b.activity, "× %s refused: --calling-mode none\n", visible(name))
		return errorResponse("bridge.not_allowed", "function calling is turned off for this conversation", "Answer in text.")
	case len(b.opts.AllowedTools) > 0 && !slices.Contains(b.opts.AllowedTools, name):
		fmt.Fprintf(b.activity, "× %s refused: not in --allowed-tools\n", visible(name))
		return errorResponse("bridge.not_allowed", name+" is not one of the tools allowed for this conversation",
			"Call only: "+strings.Join(b.opts.AllowedTools, ", "))
	}
	return nil
}

// runBlocks is runCalls for the json-block protocol.
func (b *Bridge) runBlocks(ctx context.Context, text string) *genai.Content {
	calls := ParseBlocks(text)
	if len(calls) == 0 {
		return nil
	}
	blocks := make([]string, len(calls))
	for i, c := range calls {
		var resp map[string]any
		if c.Err == nil {
			resp = b.call(ctx, c.Tool, c.Args)
		} else {
			fmt.Fprintf(b.activity, "× json block %d: %s\n", i+1, visible(c.Err.Error()))
			resp = malformedResponse(c.Err)
		}
		blocks[i] = resultBlock(i+1, c.Tool, resp)
	}
	return genai.NewContentFromText(strings.Join(blocks, "\n"), genai.RoleUser)
}

// call calls one tool through MCP and shapes the outcome for the model:
// {"output": ...} on success, {"error": {code, message, hint}} otherwise.
func (b *Bridge) call(ctx context.Context, name string, args map[string]any) map[string]any {
	shown, _ := json.Marshal(args)
	fmt.Fprintf(b.activity, "→ %s %s\n", visible(name), visible(clip(string(shown), 200)))
	res, err := b.tools.Call(ctx, name, args)
	if err != nil {
		fmt.Fprintf(b.activity, "← %s failed: %s\n", visible(name), visible(err.Error()))
		return errorResponse("bridge.call_failed", err.Error(),
			"Call only the declared tools, with a JSON object of arguments: "+strings.Join(b.toolNames(), ", "))
	}
	if res.IsError {
		e := resultError(res)
		fmt.Fprintf(b.activity, "← %s error %s\n", visible(name), visible(fmt.Sprint(e["code"])))
		return withLabel(map[string]any{"error": e}, res)
	}
	fmt.Fprintf(b.activity, "← %s ok\n", visible(name))
	return withLabel(map[string]any{"output": resultOutput(res)}, res)
}

// withLabel adds to a response what the server's output filter said of the
// result: "untrusted": true and the injection "warning" text. The filter
// puts the label in _meta and the warning in a text content of its own; the
// structured result, which the model gets instead of the text, carries
// neither, so without this a file's injected instructions would reach
// Gemini unflagged.
func withLabel(resp map[string]any, res *mcp.CallToolResult) map[string]any {
	if res.Meta != nil {
		var label struct {
			Untrusted bool `json:"untrusted"`
		}
		// In process the report is the filter's own type, over a
		// transport a decoded map: JSON reads both.
		if raw, err := json.Marshal(res.Meta.AdditionalFields[filterMetaKey]); err == nil &&
			json.Unmarshal(raw, &label) == nil && label.Untrusted {
			resp["untrusted"] = true
		}
	}
	if w := warnings(res.Content); len(w) > 0 {
		resp["warning"] = strings.Join(w, "\n")
	}
	return resp
}

// warnings returns the texts of the filter's warning contents.
func warnings(content []mcp.Content) []string {
	var out []string
	for _, c := range content {
		if t, ok := c.(mcp.TextContent); ok && strings.HasPrefix(t.Text, filterWarningPrefix) {
			out = append(out, t.Text)
		}
	}
	return out
}

// resultError reads a toolwarden coded error ({code, message, hint, rule},
// see toolerr.Result) from an isError result, or wraps any other text as
// its message.
func resultError(res *mcp.CallToolResult) map[string]any {
	e, ok := toolerr.FromResult(res)
	if !ok {
		return map[string]any{"code": "tool_error", "message": contentText(res.Content)}
	}
	out := map[string]any{"code": string(e.Code), "message": e.Message}
	if e.Hint != "" {
		out["hint"] = e.Hint
	}
	if e.Rule != "" {
		out["rule"] = e.Rule
	}
	return out
}

// resultOutput prefers the structured result, else the text. The filter's
// warning is left out here: withLabel gives it its own key.
func resultOutput(res *mcp.CallToolResult) any {
	if res.StructuredContent != nil {
		return res.StructuredContent
	}
	return contentText(res.Content)
}

// contentText joins text contents, except the filter's warnings, and names
// the others.
func contentText(content []mcp.Content) string {
	var parts []string
	for _, c := range content {
		switch c := c.(type) {
		case mcp.TextContent:
			if !strings.HasPrefix(c.Text, filterWarningPrefix) {
				parts = append(parts, c.Text)
			}
		case mcp.ImageContent:
			parts = append(parts, "[image "+c.MIMEType+" omitted]")
		case mcp.AudioContent:
			parts = append(parts, "[audio "+c.MIMEType+" omitted]")
		case mcp.EmbeddedResource:
			if r, ok := c.Resource.(mcp.TextResourceContents); ok {
				parts = append(parts, r.Text)
			} else {
				parts = append(parts, "[binary resource omitted]")
			}
		default:
			parts = append(parts, "[content omitted]")
		}
	}
	return strings.Join(parts, "\n")
}

func errorResponse(code, message, hint string) map[string]any {
	return map[string]any{"error": map[string]any{"code": code, "message": message, "hint": hint}}
}

func (b *Bridge) toolNames() []string {
	names := make([]string, 0, len(b.tools.Tools()))
	for _, t := range b.tools.Tools() {
		names = append(names, t.Name)
	}
	return names
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// toolSchema is a tool's input schema as JSON.
func toolSchema(t mcp.Tool) json.RawMessage {
	if len(t.RawInputSchema) > 0 {
		return t.RawInputSchema
	}
	b, _ := json.Marshal(t.InputSchema)
	return b
}
