//go:build conformance

package conformance

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/internal/rpcerr"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
)

// The suite's 2026-07-28 multi round-trip fixtures (SEP-2322): a tool
// asks the client for input by returning an input_required result with
// its inputRequests and an opaque requestState; the client retries the
// call with inputResponses and the state echoed. mcp-go carries both
// ways; before 2026-07-28 it asks the client itself (server-initiated
// requests) and calls the handler again with the answers.

// stateRule names the rule a requestState that fails its check breaks.
const stateRule = "mrtr.request_state"

// stateful wraps a fixture's handler with the state check: a state that
// fails it answers the call with a JSON-RPC invalid-params error naming
// stateRule (a tool error where the transport offers no such answer).
func stateful(name string, h func(context.Context, mcp.CallToolRequest, int) (*mcp.CallToolResult, error)) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		round, err := checkState(name, req.Params.RequestState)
		if err != nil {
			return refuse(ctx, rpcerr.Invalid(stateRule, err.Error()), stateRule,
				"Retry with the requestState of the server's last input_required result, unchanged, or call again without one.")
		}
		return h(ctx, req, round)
	}
}

// capabilityRule names the rule a call that needs an undeclared client
// capability breaks.
const capabilityRule = "mcp.client_capabilities"

// refuse answers the call with e where the transport offers that
// (rpcerr.Answer); the guard audits, and a transport that does not
// answers, the tool error naming rule.
func refuse(ctx context.Context, e *rpcerr.Error, rule, hint string) (*mcp.CallToolResult, error) {
	rpcerr.Answer(ctx, e)
	return nil, toolerr.New(toolerr.InvalidArgument, hint, "%s", e.Message).WithRule(rule)
}

func askName(message string) mcp.ElicitationParams {
	return mcp.ElicitationParams{Mode: "form", Message: message, RequestedSchema: map[string]any{
		"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}}}
}

func askSample(text string, maxTokens int) mcp.CreateMessageParams {
	return mcp.CreateMessageParams{
		Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(text)}},
		MaxTokens: maxTokens,
	}
}

// accepted returns the content of the accepted elicitation under id, or
// nil when there is none (absent, declined, not an elicitation result).
func accepted(responses mcp.InputResponses, id string) map[string]any {
	res := server.ElicitationResponse(responses, id)
	if res == nil || res.Action != mcp.ElicitationResponseActionAccept {
		return nil
	}
	content, _ := res.Content.(map[string]any)
	return content
}

func sampledText(responses mcp.InputResponses, id string) (string, bool) {
	res := server.SamplingResponse(responses, id)
	if res == nil {
		return "", false
	}
	if c, ok := res.Content.(mcp.TextContent); ok {
		return c.Text, true
	}
	return "", true
}

// clientCaps are the capabilities the request's client declared (its
// _meta's in 2026-07-28, the session's before), nil when unknown.
func clientCaps(ctx context.Context) *mcp.ClientCapabilities {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.ClientCapabilities
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		caps := s.GetClientCapabilities()
		return &caps
	}
	return nil
}

// mrtrTools are the multi round-trip fixtures and the suite's stateless
// diagnostic tools (server-stateless).
func mrtrTools() []tools.Tool {
	return []tools.Tool{
		tool("test_input_required_result_elicitation", "Tests an input_required result asking for one elicitation (SEP-2322)",
			func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				// Keys the result did not ask for are ignored; a missing or
				// malformed answer is asked for again.
				if c := accepted(req.Params.InputResponses, "user_name"); c != nil {
					if name, ok := c["name"].(string); ok {
						return mcp.NewToolResultText("Hello, " + name + "!"), nil
					}
				}
				return server.NewInputRequestBuilder("").Elicit("user_name", askName("What is your name?")).ToolResult(), nil
			}),
		tool("test_input_required_result_sampling", "Tests an input_required result asking for one sampling (SEP-2322)",
			func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if text, ok := sampledText(req.Params.InputResponses, "capital_question"); ok {
					return mcp.NewToolResultText("LLM response: " + text), nil
				}
				return server.NewInputRequestBuilder("").Sample("capital_question", askSample("What is the capital of France?", 100)).ToolResult(), nil
			}),
		tool("test_input_required_result_list_roots", "Tests an input_required result asking for the client's roots (SEP-2322)",
			func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if roots := server.RootsResponse(req.Params.InputResponses, "client_roots"); roots != nil {
					uris := make([]string, 0, len(roots.Roots))
					for _, r := range roots.Roots {
						uris = append(uris, r.URI)
					}
					return mcp.NewToolResultText("Client roots: " + strings.Join(uris, ", ")), nil
				}
				return server.NewInputRequestBuilder("").Roots("client_roots").ToolResult(), nil
			}),
		tool("test_input_required_result_request_state", "Tests an input_required result with a signed requestState (SEP-2322)",
			stateful("test_input_required_result_request_state", func(_ context.Context, req mcp.CallToolRequest, round int) (*mcp.CallToolResult, error) {
				if round == 1 && accepted(req.Params.InputResponses, "confirm") != nil {
					return mcp.NewToolResultText("state-ok: the requestState was verified"), nil
				}
				return server.NewInputRequestBuilder(signState("test_input_required_result_request_state", 1)).
					Elicit("confirm", mcp.ElicitationParams{Mode: "form", Message: "Please confirm", RequestedSchema: map[string]any{
						"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}, "required": []string{"ok"}}}).
					ToolResult(), nil
			})),
		tool("test_input_required_result_tampered_state", "Tests that a requestState altered by the client is refused (SEP-2322)",
			stateful("test_input_required_result_tampered_state", func(_ context.Context, req mcp.CallToolRequest, round int) (*mcp.CallToolResult, error) {
				if round == 1 && len(req.Params.InputResponses) > 0 {
					return mcp.NewToolResultText("state-ok"), nil
				}
				return server.NewInputRequestBuilder(signState("test_input_required_result_tampered_state", 1)).
					Elicit("confirm", mcp.ElicitationParams{Mode: "form", Message: "Please confirm", RequestedSchema: map[string]any{
						"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}, "required": []string{"ok"}}}).
					ToolResult(), nil
			})),
		tool("test_input_required_result_multiple_inputs", "Tests an input_required result asking for an elicitation, a sampling and the roots at once (SEP-2322)",
			stateful("test_input_required_result_multiple_inputs", func(_ context.Context, req mcp.CallToolRequest, round int) (*mcp.CallToolResult, error) {
				in := req.Params.InputResponses
				name, named := accepted(in, "user_name")["name"].(string)
				greeting, sampled := sampledText(in, "greeting")
				roots := server.RootsResponse(in, "client_roots")
				if round == 1 && named && sampled && roots != nil {
					return mcp.NewToolResultText(fmt.Sprintf("Name: %s; greeting: %s; roots: %d", name, greeting, len(roots.Roots))), nil
				}
				return server.NewInputRequestBuilder(signState("test_input_required_result_multiple_inputs", 1)).
					Elicit("user_name", askName("What is your name?")).
					Sample("greeting", askSample("Generate a greeting", 50)).
					Roots("client_roots").ToolResult(), nil
			})),
		tool("test_input_required_result_multi_round", "Tests two input_required rounds before the result, the requestState changing each round (SEP-2322)",
			stateful("test_input_required_result_multi_round", func(_ context.Context, req mcp.CallToolRequest, round int) (*mcp.CallToolResult, error) {
				const name = "test_input_required_result_multi_round"
				in := req.Params.InputResponses
				switch {
				case round == 2 && accepted(in, "step2") != nil:
					return mcp.NewToolResultText(fmt.Sprintf("Done: favorite color %v", accepted(in, "step2")["color"])), nil
				case round == 1 && accepted(in, "step1") != nil:
					return server.NewInputRequestBuilder(signState(name, 2)).Elicit("step2", mcp.ElicitationParams{Mode: "form",
						Message: "Step 2: What is your favorite color?", RequestedSchema: map[string]any{
							"type": "object", "properties": map[string]any{"color": map[string]any{"type": "string"}}, "required": []string{"color"}}}).
						ToolResult(), nil
				}
				return server.NewInputRequestBuilder(signState(name, 1)).Elicit("step1", askName("Step 1: What is your name?")).ToolResult(), nil
			})),
		tool("test_input_required_result_capabilities", "Tests that input requests go only to capabilities the client declared (SEP-2322)",
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if len(req.Params.InputResponses) > 0 {
					return mcp.NewToolResultText(fmt.Sprintf("Received %d input responses", len(req.Params.InputResponses))), nil
				}
				caps := clientCaps(ctx)
				b := server.NewInputRequestBuilder("")
				asked := false
				if caps != nil && caps.Sampling != nil {
					b.Sample("capital_question", askSample("What is the capital of France?", 100))
					asked = true
				}
				if caps != nil && caps.Elicitation != nil {
					b.Elicit("user_name", askName("What is your name?"))
					asked = true
				}
				if caps != nil && caps.Roots != nil {
					b.Roots("client_roots")
					asked = true
				}
				if !asked {
					return mcp.NewToolResultText("The client declared no capability to ask for input with"), nil
				}
				return b.ToolResult(), nil
			}),
		tool("test_missing_capability", "Tests the MissingRequiredClientCapabilityError of a call that needs sampling (SEP-2575)",
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if caps := clientCaps(ctx); caps == nil || caps.Sampling == nil {
					return refuse(ctx, rpcerr.MissingCapability("sampling"), capabilityRule, "Declare sampling in the client's capabilities.")
				}
				if text, ok := sampledText(req.Params.InputResponses, "sample"); ok {
					return mcp.NewToolResultText("LLM response: " + text), nil
				}
				return server.NewInputRequestBuilder("").Sample("sample", askSample("Say hello", 20)).ToolResult(), nil
			}),
		tool("test_streaming_elicitation", "Tests that a call needing input answers with an input_required result, not a request on its stream (SEP-2575)",
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if caps := clientCaps(ctx); caps == nil || caps.Elicitation == nil {
					return refuse(ctx, rpcerr.MissingCapability("elicitation"), capabilityRule, "Declare elicitation in the client's capabilities.")
				}
				if c := accepted(req.Params.InputResponses, "user_name"); c != nil {
					return mcp.NewToolResultText(fmt.Sprintf("Hello, %v!", c["name"])), nil
				}
				return server.NewInputRequestBuilder("").Elicit("user_name", askName("What is your name?")).ToolResult(), nil
			}),
		tool("test_logging_tool", "Tests that log messages reach only a client that asked for a log level (SEP-2575)", withLogging),
	}
}

// inputPrompt is the prompt whose prompts/get asks for input (the suite's
// input-required-result-non-tool-request).
func inputPrompt(s *server.MCPServer) {
	s.AddPrompt(mcp.NewPrompt("test_input_required_result_prompt", mcp.WithPromptDescription("A prompt that asks the client for context first (SEP-2322)")),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			c := accepted(req.Params.InputResponses, "user_context")
			if c == nil {
				return server.NewInputRequestBuilder("").Elicit("user_context", mcp.ElicitationParams{Mode: "form",
					Message: "What context should the prompt use?", RequestedSchema: map[string]any{
						"type": "object", "properties": map[string]any{"context": map[string]any{"type": "string"}}, "required": []string{"context"}}}).
					PromptResult(), nil
			}
			return mcp.NewGetPromptResult("", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser,
				mcp.NewTextContent(fmt.Sprintf("Use this context: %v", c["context"])))}), nil
		})
}
