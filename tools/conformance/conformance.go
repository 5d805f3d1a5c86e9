//go:build conformance

package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/tools"
)

// The suite's fixture content: a 1x1 red PNG and a minimal WAV file.
const (
	imagePNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	audioWAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

// Toolset names the fixture tools' toolset.
const Toolset = "conformance"

// Tools are the suite's fixture tools. They run no backend, touch nothing
// and need no capability; the guard checks and audits their calls like
// any other tool's.
func Tools() []tools.Tool {
	fixed := func(name, description string, content ...mcp.Content) tools.Tool {
		return tool(name, description, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: content}, nil
		})
	}
	mixed, _ := json.Marshal(map[string]any{"test": "data", "value": 123})
	return append([]tools.Tool{
		fixed("test_simple_text", "Tests simple text content response",
			mcp.NewTextContent("This is a simple text response for testing.")),
		fixed("test_image_content", "Tests image content response",
			mcp.NewImageContent(imagePNG, "image/png")),
		fixed("test_audio_content", "Tests audio content response",
			mcp.NewAudioContent(audioWAV, "audio/wav")),
		fixed("test_embedded_resource", "Tests embedded resource content response",
			mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."})),
		fixed("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)",
			mcp.NewTextContent("Multiple content types test:"),
			mcp.NewImageContent(imagePNG, "image/png"),
			mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: string(mixed)})),
		tool("test_error_handling", "Tests error response handling", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("This tool intentionally returns an error for testing"), nil
		}),
		tool("test_tool_with_logging", "Tests tool that emits log messages during execution", withLogging),
		tool("test_tool_with_progress", "Tests tool that reports progress notifications", withProgress),
		withArgs[promptArgs](tool("test_sampling", "Tests server-initiated sampling (LLM completion request)", sampling)),
		withArgs[messageArgs](tool("test_elicitation", "Tests server-initiated elicitation (user input request)", elicitation)),
	}, mrtrTools()...)
}

type promptArgs struct {
	Prompt string `json:"prompt" jsonschema:"The prompt to send to the LLM"`
}

type messageArgs struct {
	Message string `json:"message" jsonschema:"The message to show the user"`
}

// withArgs gives t the input schema of In.
func withArgs[In any](t tools.Tool) tools.Tool {
	mcp.WithInputSchema[In]()(&t.Tool)
	return t
}

func sampling(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	//lint:ignore SA1019 the 2025-06-18 suite scenario tools-call-sampling tests exactly this
	res, err := server.ServerFromContext(ctx).RequestSampling(ctx, mcp.CreateMessageRequest{CreateMessageParams: mcp.CreateMessageParams{
		Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(req.GetString("prompt", ""))}},
		MaxTokens: 100,
	}})
	if err != nil {
		return mcp.NewToolResultText("Sampling not supported or error: " + err.Error()), nil
	}
	text := "No response"
	if c, ok := res.Content.(mcp.TextContent); ok {
		text = c.Text
	}
	return mcp.NewToolResultText("LLM response: " + text), nil
}

func elicitation(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, err := server.ServerFromContext(ctx).RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
		Mode:    "form",
		Message: req.GetString("message", ""),
		RequestedSchema: map[string]any{"type": "object", "required": []string{"response"},
			"properties": map[string]any{"response": map[string]any{"type": "string", "description": "User's response"}}},
	}})
	if err != nil {
		return mcp.NewToolResultText("Elicitation not supported or error: " + err.Error()), nil
	}
	content, _ := json.Marshal(res.Content)
	return mcp.NewToolResultText(fmt.Sprintf("User response: action=%s, content=%s", res.Action, content)), nil
}

// noArgs is the fixture tools' input: none.
type noArgs struct{}

func tool(name, description string, h server.ToolHandlerFunc) tools.Tool {
	return tools.Tool{
		Tool: mcp.NewTool(name, mcp.WithDescription(description), mcp.WithInputSchema[noArgs](),
			mcp.WithTitleAnnotation(name),
			mcp.WithReadOnlyHintAnnotation(true),
			mcp.WithDestructiveHintAnnotation(false),
			mcp.WithIdempotentHintAnnotation(true),
			mcp.WithOpenWorldHintAnnotation(false)),
		Handler: h,
		Meta:    tools.Meta{Toolset: Toolset},
	}
}

func withLogging(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return nil, errors.New("no server in the call's context")
	}
	for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 {
			pause(ctx)
		}
		if err := srv.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(mcp.LoggingLevelInfo, "conformance-test-server", msg)); err != nil {
			return nil, err
		}
	}
	return mcp.NewToolResultText("Tool with logging executed successfully"), nil
}

func withProgress(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return nil, errors.New("no server in the call's context")
	}
	var token mcp.ProgressToken = 0
	if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
		token = req.Params.Meta.ProgressToken
	}
	for i, p := range []int{0, 50, 100} {
		if i > 0 {
			pause(ctx)
		}
		params := map[string]any{"progressToken": token, "progress": p, "total": 100, "message": "Completed step " + strconv.Itoa(p) + " of 100"}
		if err := srv.SendNotificationToClient(ctx, "notifications/progress", params); err != nil {
			return nil, err
		}
	}
	b, _ := json.Marshal(token)
	return mcp.NewToolResultText(string(b)), nil
}

// pause waits between two notifications as the suite's reference server
// does (50 ms).
func pause(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(50 * time.Millisecond):
	}
}
