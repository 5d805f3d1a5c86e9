package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/structured"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
)

// resourceSource is a backend closer that also offers MCP resources.
type resourceSource interface {
	Resources() tools.Resources
}

// addResources registers the resources the backends offer. A toolset's
// resources are offered only when the policy allows their read tool, and
// each read runs as a guarded call of that tool.
func (s *Server) addResources(sources []io.Closer) {
	for _, src := range sources {
		rs, ok := src.(resourceSource)
		if !ok {
			continue
		}
		res := rs.Resources()
		if !s.guard.Allowed(res.ReadTool) {
			continue
		}
		s.mcp.AddResourceTemplate(res.Template, s.readResource(res))
		s.mcp.GetHooks().AddAfterListResources(s.listResources(res))
	}
}

// readResource runs a resources/read as a call of res.ReadTool through the
// guard middleware: policy, limits, argument checks, output cap and audit
// apply as to any call. A refusal becomes a JSON-RPC error whose message is
// the tool error's JSON (resources have no isError results).
func (s *Server) readResource(res tools.Resources) server.ResourceTemplateHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		uri := req.Params.URI
		var handler server.ToolHandlerFunc
		for _, t := range s.tools {
			if t.Tool.Name == res.ReadTool {
				handler = t.Handler
			}
		}
		if handler == nil {
			return nil, fmt.Errorf("resource tool %s is not registered", res.ReadTool)
		}
		args, err := json.Marshal(res.ReadArgs(uri))
		if err != nil {
			return nil, err
		}
		call := mcp.CallToolRequest{}
		call.Params.Name = res.ReadTool
		call.Params.RawArguments = args
		out, err := s.guardMiddleware(handler)(ctx, call)
		if err != nil {
			return nil, err
		}
		if out.IsError {
			return nil, resourceError(out)
		}
		raw, err := structured.JSON(out.StructuredContent)
		if out.StructuredContent == nil || err != nil {
			return nil, errors.New("resource tool returned no structured content")
		}
		contents, err := res.Contents(uri, raw)
		return labelContents(contents, out.Meta), err
	}
}

func resourceError(res *mcp.CallToolResult) error {
	msg := string(toolerr.ErrorCode(res))
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(mcp.TextContent); ok {
			msg = tc.Text
		}
	}
	if toolerr.ErrorCode(res) == toolerr.NotFound {
		return fmt.Errorf("%w: %s", mcp.ErrResourceNotFound, msg)
	}
	return errors.New(msg)
}

// listResources fills a resources/list result with one page of res. The
// listing shows what res.ListTool would, so it is admitted, counted,
// filtered and audited as a call of that tool (without its arguments); a
// refused listing, or one that would need the human's approval, adds
// nothing. mcp-go lists only static resources, and there are none, so the
// page and its cursor come from res.List. A store that cannot be listed
// gives an empty page; the failure is logged.
func (s *Server) listResources(res tools.Resources) server.OnAfterListResourcesFunc {
	return func(ctx context.Context, _ any, req *mcp.ListResourcesRequest, out *mcp.ListResourcesResult) {
		if out == nil || !s.guard.Allowed(res.ListTool) {
			return
		}
		call := guard.Call{Tool: res.ListTool, Session: sessionID(ctx), Identity: identityOf(ctx), Claims: claimsOf(ctx), Trusted: isTrusted(ctx)}
		ticket, denial := s.guard.AdmitListing(call)
		if denial != nil {
			s.log.Debug("resources/list denied", "tool", call.Tool, "session", call.Session, "code", denial.Code, "rule", denial.Rule)
			return
		}
		if ticket.NeedsApproval() {
			ticket.Decline(unavailableError(call.Tool, "resources/list cannot ask the human; call the tool instead"))
			return
		}
		page, next, err := res.List(ctx, string(req.Params.Cursor))
		if err != nil {
			ticket.Finish(nil, err)
			s.log.Warn("resources/list failed", "template", res.Template.URITemplate.Raw(), "error", err)
			return
		}
		listed := resourcePage{Resources: page, NextCursor: next}
		raw, err := json.Marshal(listed)
		if err != nil {
			ticket.Finish(nil, err)
			return
		}
		filtered := ticket.Finish(&mcp.CallToolResult{StructuredContent: json.RawMessage(raw)}, nil)
		if filtered.IsError || filtered.StructuredContent == nil {
			return
		}
		if raw, err = json.Marshal(filtered.StructuredContent); err != nil || json.Unmarshal(raw, &listed) != nil {
			return
		}
		out.Resources = append(out.Resources, listed.Resources...)
		out.NextCursor = mcp.Cursor(listed.NextCursor)
	}
}

// resourcePage is one page of a listing as the output filter sees it.
type resourcePage struct {
	Resources  []mcp.Resource `json:"resources"`
	NextCursor string         `json:"nextCursor,omitempty"`
}
