package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/upstream"
)

// upstreamItems are the upstreams' prompts and resources as offered: read
// when the server is built, checked as tool definitions are, each behind
// a guarded item (see package upstream) that the policy must allow.
type upstreamItems struct {
	prompts   []upstreamPrompt
	resources []upstreamResources
	// withheld are the prompts (and resources) not offered, and why.
	withheld []Unavailable
	// upstreams are the connected upstreams, whose prompts are listed
	// again on their prompts/list_changed and after each restart.
	upstreams []promptSource
	cfg       configs.Config
}

// upstreamPrompt is one upstream prompt as offered.
type upstreamPrompt struct {
	conn *upstream.Conn
	// own is the prompt's name at the upstream.
	own string
	// offered is what prompts/list shows: namespaced, filtered.
	offered mcp.Prompt
	item    tools.Tool
	timeout time.Duration
}

// upstreamResources are one upstream's resources as offered.
type upstreamResources struct {
	conn    *upstream.Conn
	item    tools.Tool
	check   *definitionCheck
	accept  []string
	timeout time.Duration
}

// guarded are the items the guard must know, besides the tools.
func (u upstreamItems) guarded() []tools.Tool {
	var out []tools.Tool
	for _, p := range u.prompts {
		out = append(out, p.item)
	}
	for _, r := range u.resources {
		out = append(out, r.item)
	}
	return out
}

// listUpstreamItems reads the prompts of every connected upstream (the
// *upstream.Conn among closers) and whether it has resources. A prompt
// whose name is taken (by a tool, built-in, declared or upstream, or the
// resources item) or whose definition the definition check flags is
// withheld, as a tool would be; upstreams[].accept_flagged names
// prompts too. The prompts are compared with their pins (pins) as tools
// are: one refused as drift is registered but hidden. An upstream whose
// prompts cannot be listed or pinned offers none until it lists them
// again.
func listUpstreamItems(ctx context.Context, cfg configs.Config, offered []tools.Tool, closers []io.Closer, pins *pinGate, log *slog.Logger) (upstreamItems, error) {
	out := upstreamItems{cfg: cfg}
	if !slices.ContainsFunc(closers, func(c io.Closer) bool { _, ok := c.(*upstream.Conn); return ok }) {
		// No upstream is open: nothing to list, and no need to build
		// the catalog again for the names it takes.
		return out, nil
	}
	taken := reservedNames(cfg)
	var names []string
	for _, t := range offered {
		taken[t.Tool.Name] = "a tool"
		names = append(names, t.Tool.Name)
	}
	check, err := newDefinitionCheck(cfg, names)
	if err != nil {
		return out, err
	}
	for _, c := range closers {
		conn, ok := c.(*upstream.Conn)
		if !ok {
			continue
		}
		i := slices.IndexFunc(cfg.Upstreams, func(u configs.Upstream) bool { return u.Name == conn.Name() })
		if i < 0 {
			continue
		}
		u := cfg.Upstreams[i]
		out.upstreams = append(out.upstreams, promptSource{conn: conn, i: i, u: u})
		key := fmt.Sprintf("upstreams[%d]", i)
		withhold := func(what, reason string) {
			log.Warn("upstream item withheld", "key", key, "upstream", u.Name, "item", what, "reason", reason)
			out.withheld = append(out.withheld, Unavailable{Toolset: "upstream:" + u.Name + " " + what, Reason: key + ": " + reason})
		}
		if conn.OffersResources() {
			it := upstream.ResourceItem(u.Name)
			if other, ok := taken[it.Tool.Name]; ok {
				withhold("resources", "the name of its resources item "+it.Tool.Name+" is also "+other)
			} else {
				taken[it.Tool.Name] = "the resources of upstream " + u.Name
				out.resources = append(out.resources, upstreamResources{conn: conn, item: it, check: check, accept: u.AcceptFlagged, timeout: u.Timeout()})
			}
		}
		prompts, drifted, _, err := listPrompts(ctx, conn, u, pins)
		if err != nil {
			withhold("prompts", err.Error())
			continue
		}
		for _, p := range prompts {
			up, reason := offerPrompt(conn, u, p, check, taken, drifted[p.Name])
			if reason != "" {
				withhold("prompt "+p.Name, reason)
				continue
			}
			taken[up.item.Tool.Name] = "the prompt " + p.Name + " of upstream " + u.Name
			out.prompts = append(out.prompts, up)
		}
	}
	return out, nil
}

// offerPrompt is p as offered, or why it is withheld. A prompt refused
// as drift (drifted) is not withheld for the flags of its definition: it
// is hidden, and its gets are answered with what changed.
func offerPrompt(conn *upstream.Conn, u configs.Upstream, p mcp.Prompt, check *definitionCheck, taken map[string]string, drifted bool) (upstreamPrompt, string) {
	it, err := upstream.PromptItem(u.Name, p)
	if err != nil {
		return upstreamPrompt{}, err.Error()
	}
	if other, ok := taken[it.Tool.Name]; ok {
		return upstreamPrompt{}, "its name is also " + other
	}
	findings, filtered := check.findings(it)
	if len(findings) > 0 && !drifted && !slices.Contains(u.AcceptFlagged, p.Name) {
		return upstreamPrompt{}, flagged(p.Name, findings)
	}
	args := make([]mcp.PromptArgument, len(p.Arguments))
	for i, a := range p.Arguments {
		args[i] = mcp.PromptArgument{Name: a.Name, Required: a.Required, Description: check.text(a.Description)}
	}
	offered := mcp.Prompt{Name: it.Tool.Name, Title: filtered.Tool.Title, Description: filtered.Tool.Description, Arguments: args}
	return upstreamPrompt{conn: conn, own: p.Name, offered: offered, item: it, timeout: u.Timeout()}, ""
}

// text is s as the definition check's filter leaves it.
func (d *definitionCheck) text(s string) string {
	t := tools.Tool{}
	t.Tool.Description = s
	t.Tool.RawInputSchema = json.RawMessage(`{}`)
	_, filtered := d.findings(t)
	return filtered.Tool.Description
}

// addUpstreamItems registers the upstreams' prompts and resources. Every
// prompt is registered, as every tool is, so that a get of one the policy
// does not allow is denied and audited; prompts/list shows only those the
// caller may get and that are not refused as drift. Each upstream with
// resources gets one template, upstream://<name>/{+uri}, that routes its
// reads; resources/list and resources/templates/list show its resources
// and templates, live, under that prefix.
func (s *Server) addUpstreamItems(items upstreamItems) {
	hooks := s.mcp.GetHooks()
	offers := newPromptOffers(items)
	s.watchUpstreamLists(items, offers)
	for _, p := range items.prompts {
		s.mcp.AddPrompt(p.offered, s.getUpstreamPrompt(offers, p.item.Tool.Name))
		if s.guard.Allowed(p.item.Tool.Name) {
			s.log.Info("upstream prompt offered: policy.allow names it", "prompt", p.item.Tool.Name)
		}
	}
	if len(items.upstreams) > 0 {
		hooks.AddAfterListPrompts(s.hideDisallowedPrompts)
	}
	for _, r := range items.resources {
		s.mcp.AddResourceTemplate(routeTemplate(r.conn.Name()), s.readUpstreamResource(r))
		if s.guard.Allowed(r.item.Tool.Name) {
			s.log.Info("upstream resources offered: policy.allow names their item", "item", r.item.Tool.Name)
		}
	}
	if len(items.resources) > 0 {
		hooks.AddAfterListResources(s.listUpstreamResources(items.resources))
		hooks.AddAfterListResourceTemplates(s.listUpstreamTemplates(items.resources))
	}
}

// routeTemplate is the template that routes the reads of name's
// resources; it is not listed.
func routeTemplate(name string) mcp.ResourceTemplate {
	return mcp.NewResourceTemplate(upstream.ResourceScheme+name+"/{+uri}", name+" resources")
}

// hideDisallowedPrompts takes out of a prompts/list the prompts the
// caller may not get, and those refused as drift.
func (s *Server) hideDisallowedPrompts(ctx context.Context, _ any, _ *mcp.ListPromptsRequest, res *mcp.ListPromptsResult) {
	if res == nil {
		return
	}
	identity, claims := identityOf(ctx), claimsOf(ctx)
	res.Prompts = slices.DeleteFunc(res.Prompts, func(p mcp.Prompt) bool {
		return !s.guard.AdvertisedTo(identity, claims, p.Name) || s.pins.promptHidden(p.Name)
	})
}

// getUpstreamPrompt runs a prompts/get as a guarded call of the prompt's
// item: policy, capabilities, limits, argument validation, the call
// deadline, the output filter and cap and the audit line apply as to a
// tool call. The prompt's description and every message's content are
// filtered as a tool result's contents are; a warning the filter adds
// becomes a last user message. A refusal is a JSON-RPC error whose
// message is the tool error's JSON.
func (s *Server) getUpstreamPrompt(offers *promptOffers, name string) server.PromptHandlerFunc {
	return func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		p, ok := offers.get(name)
		if !ok {
			return nil, fmt.Errorf("prompt %q is no longer offered", name)
		}
		args := req.Params.Arguments
		if args == nil {
			args = map[string]string{}
		}
		raw, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		var mu sync.Mutex
		var roles []mcp.Role
		call := mcp.CallToolRequest{}
		call.Params.Name, call.Params.RawArguments = p.item.Tool.Name, raw
		// A prompt that changed is refused before the guard charges it;
		// one the policy does not allow is denied as such.
		if e := s.pins.promptRefusal(p.item.Tool.Name); e != nil && s.guard.Allowed(p.item.Tool.Name) {
			gc, _, _ := s.callOf(ctx, call)
			return nil, resourceError(toolerr.Result(s.guard.Reject(gc, e)))
		}
		out, err := s.guardCall(ctx, call, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args map[string]string
			if err := json.Unmarshal(req.Params.RawArguments, &args); err != nil {
				return nil, err
			}
			res, err := p.conn.GetPrompt(ctx, p.own, args)
			if err != nil {
				return toolerr.Result(toolerr.As(err)), nil
			}
			content := []mcp.Content{mcp.NewTextContent(res.Description)}
			var r []mcp.Role
			for _, m := range res.Messages {
				r = append(r, m.Role)
				content = append(content, m.Content)
			}
			mu.Lock()
			roles = r
			mu.Unlock()
			return &mcp.CallToolResult{Content: content}, nil
		})
		if err != nil {
			return nil, err
		}
		if out.IsError {
			return nil, resourceError(out)
		}
		mu.Lock()
		defer mu.Unlock()
		return promptResult(p.conn.Name(), roles, out)
	}
}

// promptResult puts a filtered prompt of upstream name back together:
// the description first, then one content per message of roles, then
// what the filter added (its warning), as user messages. A resource
// embedded in a message is namespaced as a read of it would be.
func promptResult(name string, roles []mcp.Role, out *mcp.CallToolResult) (*mcp.GetPromptResult, error) {
	if len(out.Content) < len(roles)+1 {
		return nil, errors.New("the prompt's filtered result lost messages")
	}
	res := &mcp.GetPromptResult{}
	res.Meta = out.Meta
	if d, ok := out.Content[0].(mcp.TextContent); ok {
		res.Description = d.Text
	}
	for i, c := range out.Content[1:] {
		role := mcp.RoleUser
		if i < len(roles) {
			role = roles[i]
		}
		if role != mcp.RoleUser && role != mcp.RoleAssistant {
			return nil, fmt.Errorf("the upstream's prompt has a message of role %q, neither user nor assistant", role)
		}
		if e, ok := c.(mcp.EmbeddedResource); ok {
			if rc := resourceContents(name, "", []mcp.Content{e}); len(rc) == 1 {
				e.Resource = rc[0]
				c = e
			}
		}
		res.Messages = append(res.Messages, mcp.PromptMessage{Role: role, Content: c})
	}
	return res, nil
}

// readUpstreamResource runs a resources/read of an upstream:// URI as a
// guarded call of the upstream's resources item, with the upstream's own
// URI as argument. Text and blob contents go through the output filter
// and cap as embedded resources of a tool result do; their URIs are
// namespaced again, and a warning the filter adds is a text content of
// the URI read.
func (s *Server) readUpstreamResource(r upstreamResources) server.ResourceTemplateHandlerFunc {
	name := r.conn.Name()
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		uri := req.Params.URI
		own, ok := upstream.OriginalURI(name, uri)
		if !ok {
			return nil, fmt.Errorf("%w: %s", mcp.ErrResourceNotFound, uri)
		}
		raw, err := json.Marshal(map[string]string{"uri": own})
		if err != nil {
			return nil, err
		}
		call := mcp.CallToolRequest{}
		call.Params.Name, call.Params.RawArguments = r.item.Tool.Name, raw
		out, err := s.guardCall(ctx, call, func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := r.conn.ReadResource(ctx, own)
			if err != nil {
				return toolerr.Result(toolerr.As(err)), nil
			}
			content := make([]mcp.Content, 0, len(res.Contents))
			for _, c := range res.Contents {
				content = append(content, mcp.EmbeddedResource{Type: "resource", Resource: c})
			}
			return &mcp.CallToolResult{Content: content}, nil
		})
		if err != nil {
			return nil, err
		}
		if out.IsError {
			return nil, resourceError(out)
		}
		return labelContents(resourceContents(name, uri, out.Content), out.Meta), nil
	}
}

// resourceContents are the filtered contents of a read of uri, with
// their URIs namespaced under upstream name.
func resourceContents(name, uri string, content []mcp.Content) []mcp.ResourceContents {
	var out []mcp.ResourceContents
	for _, c := range content {
		switch x := c.(type) {
		case mcp.EmbeddedResource:
			switch rc := x.Resource.(type) {
			case mcp.TextResourceContents:
				rc.URI = upstream.ResourceURI(name, rc.URI)
				out = append(out, rc)
			case mcp.BlobResourceContents:
				rc.URI = upstream.ResourceURI(name, rc.URI)
				out = append(out, rc)
			}
		case mcp.TextContent:
			out = append(out, mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: x.Text})
		}
	}
	return out
}

// upstreamListing is what the output filter sees of an upstream's
// resources or templates as listed.
type upstreamListing struct {
	Resources []mcp.Resource         `json:"resources,omitempty"`
	Templates []mcp.ResourceTemplate `json:"resourceTemplates,omitempty"`
}

// listUpstreamResources adds the upstreams' resources to the first page
// of a resources/list, for a caller the policy lets read them.
func (s *Server) listUpstreamResources(rs []upstreamResources) server.OnAfterListResourcesFunc {
	return func(ctx context.Context, _ any, req *mcp.ListResourcesRequest, out *mcp.ListResourcesResult) {
		if out == nil || req.Params.Cursor != "" {
			return
		}
		for _, r := range rs {
			l := s.upstreamListing(ctx, r, false)
			out.Resources = append(out.Resources, l.Resources...)
		}
	}
}

// listUpstreamTemplates adds the upstreams' resource templates to a
// resources/templates/list, and takes out the routing templates.
func (s *Server) listUpstreamTemplates(rs []upstreamResources) server.OnAfterListResourceTemplatesFunc {
	return func(ctx context.Context, _ any, req *mcp.ListResourceTemplatesRequest, out *mcp.ListResourceTemplatesResult) {
		if out == nil {
			return
		}
		out.ResourceTemplates = slices.DeleteFunc(out.ResourceTemplates, func(t mcp.ResourceTemplate) bool {
			return slices.ContainsFunc(rs, func(r upstreamResources) bool {
				return t.URITemplate != nil && t.URITemplate.Raw() == routeTemplate(r.conn.Name()).URITemplate.Raw()
			})
		})
		if req.Params.Cursor != "" {
			return
		}
		for _, r := range rs {
			l := s.upstreamListing(ctx, r, true)
			out.ResourceTemplates = append(out.ResourceTemplates, l.Templates...)
		}
	}
}

// upstreamListing lists r's resources (or templates) now, as a listing
// of its item: admitted, counted, filtered and audited, nothing when
// refused. URIs are namespaced; a resource whose name or description the
// definition check flags is left out unless accepted
// (upstreams[].accept_flagged names its upstream URI), and so is a
// template that is no URI template once namespaced.
func (s *Server) upstreamListing(ctx context.Context, r upstreamResources, templates bool) upstreamListing {
	var out upstreamListing
	identity, claims := identityOf(ctx), claimsOf(ctx)
	if !s.guard.AdvertisedTo(identity, claims, r.item.Tool.Name) {
		return out
	}
	call := guard.Call{Tool: r.item.Tool.Name, Session: sessionID(ctx), Identity: identity, Claims: claims, Trusted: isTrusted(ctx)}
	ticket, denial := s.guard.AdmitListing(call)
	if denial != nil {
		return out
	}
	if ticket.NeedsApproval() {
		ticket.Decline(unavailableError(call.Tool, "resources/list cannot ask the human; read the resource instead"))
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	name := r.conn.Name()
	var err error
	if templates {
		var list []mcp.ResourceTemplate
		if list, err = r.conn.ListResourceTemplates(ctx); err == nil {
			out.Templates = r.templates(name, list, s.log)
		}
	} else {
		var list []mcp.Resource
		if list, err = r.conn.ListResources(ctx); err == nil {
			out.Resources = r.resources(name, list, s.log)
		}
	}
	if err != nil {
		ticket.Finish(nil, err)
		s.log.Warn("upstream resources could not be listed", "upstream", name, "err", err)
		return upstreamListing{}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		ticket.Finish(nil, err)
		return upstreamListing{}
	}
	filtered := ticket.Finish(&mcp.CallToolResult{StructuredContent: json.RawMessage(raw)}, nil)
	var listed upstreamListing
	if filtered.IsError || filtered.StructuredContent == nil {
		return listed
	}
	if raw, err = json.Marshal(filtered.StructuredContent); err != nil || json.Unmarshal(raw, &listed) != nil {
		return upstreamListing{}
	}
	return listed
}

// flaggedItem reports whether the definition check flags what an
// upstream says of a resource or template, and it is not accepted.
func (r upstreamResources) flaggedItem(name, own, title, description string, log *slog.Logger) bool {
	t := tools.Tool{}
	t.Tool.Title, t.Tool.Description, t.Tool.RawInputSchema = title, description, json.RawMessage(`{}`)
	findings, _ := r.check.findings(t)
	if len(findings) == 0 || slices.Contains(r.accept, own) {
		return false
	}
	log.Warn("upstream resource withheld from the listing", "upstream", name, "uri", own, "reason", flagged(own, findings))
	return true
}

func (r upstreamResources) resources(name string, list []mcp.Resource, log *slog.Logger) []mcp.Resource {
	var out []mcp.Resource
	for _, res := range list {
		if r.flaggedItem(name, res.URI, res.Name+"\n"+res.Title, res.Description, log) {
			continue
		}
		res.URI = upstream.ResourceURI(name, res.URI)
		out = append(out, res)
	}
	return out
}

func (r upstreamResources) templates(name string, list []mcp.ResourceTemplate, log *slog.Logger) []mcp.ResourceTemplate {
	var out []mcp.ResourceTemplate
	for _, t := range list {
		if t.URITemplate == nil {
			continue
		}
		own := t.URITemplate.Raw()
		if r.flaggedItem(name, own, t.Name+"\n"+t.Title, t.Description, log) {
			continue
		}
		b, err := json.Marshal(upstream.ResourceURI(name, own))
		var ns mcp.URITemplate
		if err != nil || ns.UnmarshalJSON(b) != nil {
			continue
		}
		t.URITemplate = &ns
		out = append(out, t)
	}
	return out
}
