//go:build conformance

package conformance

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Options are the capabilities the fixtures need: prompts, resources with
// subscriptions, logging and completions.
func Options() []server.ServerOption {
	return []server.ServerOption{
		server.WithPromptCapabilities(false),
		server.WithResourceCapabilities(true, false),
		server.WithLogging(),
		server.WithCompletions(),
	}
}

// Register adds the suite's fixture prompts and resources to s.
func Register(s *server.MCPServer) {
	text := func(uri, mime, body string) server.ResourceHandlerFunc {
		return func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: mime, Text: body}}, nil
		}
	}
	s.AddResource(mcp.NewResource("test://static-text", "static-text",
		mcp.WithResourceDescription("A static text resource for testing"), mcp.WithMIMEType("text/plain")),
		text("test://static-text", "text/plain", "This is the content of the static text resource."))
	s.AddResource(mcp.NewResource("test://static-binary", "static-binary",
		mcp.WithResourceDescription("A static binary resource (image) for testing"), mcp.WithMIMEType("image/png")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.BlobResourceContents{URI: "test://static-binary", MIMEType: "image/png", Blob: imagePNG}}, nil
		})
	s.AddResource(mcp.NewResource("test://watched-resource", "watched-resource",
		mcp.WithResourceDescription("A resource a client may subscribe to"), mcp.WithMIMEType("text/plain")),
		text("test://watched-resource", "text/plain", "Watched resource content"))
	s.AddResourceTemplate(mcp.NewResourceTemplate("test://template/{id}/data", "template",
		mcp.WithTemplateDescription("A resource template with parameter substitution"), mcp.WithTemplateMIMEType("application/json")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			id := strings.TrimSuffix(strings.TrimPrefix(req.Params.URI, "test://template/"), "/data")
			body, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(body)}}, nil
		})

	user := func(c mcp.Content) mcp.PromptMessage { return mcp.NewPromptMessage(mcp.RoleUser, c) }
	s.AddPrompt(mcp.NewPrompt("test_simple_prompt", mcp.WithPromptDescription("A simple prompt without arguments")),
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("", []mcp.PromptMessage{user(mcp.NewTextContent("This is a simple prompt for testing."))}), nil
		})
	s.AddPrompt(mcp.NewPrompt("test_prompt_with_arguments", mcp.WithPromptDescription("A prompt with required arguments"),
		mcp.WithArgument("arg1", mcp.ArgumentDescription("First test argument"), mcp.RequiredArgument()),
		mcp.WithArgument("arg2", mcp.ArgumentDescription("Second test argument"), mcp.RequiredArgument())),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return mcp.NewGetPromptResult("", []mcp.PromptMessage{user(mcp.NewTextContent(
				"Prompt with arguments: arg1='" + a["arg1"] + "', arg2='" + a["arg2"] + "'"))}), nil
		})
	s.AddPrompt(mcp.NewPrompt("test_prompt_with_embedded_resource", mcp.WithPromptDescription("A prompt that includes an embedded resource"),
		mcp.WithArgument("resourceUri", mcp.ArgumentDescription("URI of the resource to embed"), mcp.RequiredArgument())),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("", []mcp.PromptMessage{
				user(mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."})),
				user(mcp.NewTextContent("Please process the embedded resource above.")),
			}), nil
		})
	s.AddPrompt(mcp.NewPrompt("test_prompt_with_image", mcp.WithPromptDescription("A prompt that includes image content")),
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("", []mcp.PromptMessage{
				user(mcp.NewImageContent(imagePNG, "image/png")),
				user(mcp.NewTextContent("Please analyze the image above.")),
			}), nil
		})
	inputPrompt(s)
}
