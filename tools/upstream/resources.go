package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/toolwarden/toolwarden/tools/upstream/pin"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
)

// An upstream's prompts and resources are offered as its tools are: under
// its name, behind the guard. Each prompt is a guarded item named
// <upstream>__<prompt>; all its resources are read through one guarded
// item, <upstream>__resources, whose one argument is the upstream's own
// URI. The items are never listed as tools: they are what the policy,
// the capabilities, the limits and the audit know a prompts/get or a
// resources/read by.

// ResourcesItem is the own name of the item an upstream's resources are
// read through.
const ResourcesItem = "resources"

// ResourceScheme begins every URI of an upstream's resource as offered:
// upstream://<upstream>/<the upstream's own URI, unchanged>. Upstream
// names are [a-z0-9_], so one upstream's URIs cannot be taken for
// another's, and toolwarden's own resources use other schemes.
const ResourceScheme = "upstream://"

// ResourceURI is the URI uri of upstream's resource is offered under.
func ResourceURI(upstream, uri string) string { return ResourceScheme + upstream + "/" + uri }

// OriginalURI is the upstream's own URI of a resource offered as uri, and
// whether uri is one of upstream's at all.
func OriginalURI(upstream, uri string) (string, bool) {
	own, ok := strings.CutPrefix(uri, ResourceScheme+upstream+"/")
	return own, ok && own != ""
}

// PromptCapability is the capability a prompts/get of upstream's prompt
// needs; ResourcesCapability the one a resources/read of any of its
// resources needs. Both only read, and are granted by default (the items
// are annotated read-only, see upstreamGrants); capabilities.deny
// revokes them.
func PromptCapability(upstream, prompt string) string { return "mcp:get:" + upstream + "/" + prompt }

// ResourcesCapability: see PromptCapability.
func ResourcesCapability(upstream string) string { return "mcp:read:" + upstream + "/" + ResourcesItem }

// maxPromptArgument bounds one prompt argument's value.
const maxPromptArgument = 64 << 10

// PromptItem is the guarded item of upstream's prompt p: its namespaced
// name, its arguments as a strict schema of strings (the guard validates
// a prompts/get against it before the upstream sees it), the capability,
// read-only. Its handler is not bound: the server runs the get.
func PromptItem(upstream string, p mcp.Prompt) (tools.Tool, error) {
	name := Name(upstream, p.Name)
	if !toolName.MatchString(p.Name) {
		return tools.Tool{}, fmt.Errorf("its name %q is not [A-Za-z0-9_.-]{1,128}", p.Name)
	}
	if len(name) > MaxNameLength {
		return tools.Tool{}, fmt.Errorf("its namespaced name %q is %d characters, over %d", name, len(name), MaxNameLength)
	}
	props := map[string]any{}
	required := []string{}
	for _, a := range p.Arguments {
		if !toolName.MatchString(a.Name) {
			return tools.Tool{}, fmt.Errorf("its argument name %q is not [A-Za-z0-9_.-]{1,128}", a.Name)
		}
		if _, dup := props[a.Name]; dup {
			return tools.Tool{}, fmt.Errorf("its argument %q is listed twice", a.Name)
		}
		props[a.Name] = map[string]any{"type": "string", "description": a.Description, "maxLength": maxPromptArgument}
		if a.Required {
			required = append(required, a.Name)
		}
	}
	schema, err := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false})
	if err != nil {
		return tools.Tool{}, err
	}
	return item(name, p.Title, p.Description, schema, PromptCapability(upstream, p.Name)), nil
}

// ResourceItem is the guarded item all of upstream's resources are read
// through; its one argument is the upstream's own URI.
func ResourceItem(upstream string) tools.Tool {
	schema := json.RawMessage(`{"type":"object","properties":{"uri":{"type":"string","minLength":1,"maxLength":4096}},"required":["uri"],"additionalProperties":false}`)
	return item(Name(upstream, ResourcesItem), "", "Reads a resource of upstream "+upstream+".", schema, ResourcesCapability(upstream))
}

func item(name, title, description string, schema json.RawMessage, capability string) tools.Tool {
	yes, no := true, false
	t := mcp.Tool{Name: name, Title: title, Description: description, RawInputSchema: schema,
		Annotations: mcp.ToolAnnotation{ReadOnlyHint: &yes, DestructiveHint: &no, IdempotentHint: &yes, OpenWorldHint: &yes}}
	return tools.Tool{Tool: t, Meta: tools.Meta{Toolset: Toolset, Capabilities: []string{capability}}}
}

// Name is the upstream's name (upstreams[].name).
func (c *Conn) Name() string { return c.cfg.Name }

// ListPrompts lists the upstream's prompts (none when it offers none)
// and pins them as listed (pin.Prompts, over the raw prompt objects). A
// listing that cannot be pinned is refused, as a tools listing is.
func (c *Conn) ListPrompts(ctx context.Context) ([]mcp.Prompt, map[string]pin.Tool, error) {
	c.listMu.Lock() // one listing at a time: the recorder's pages are its own
	defer c.listMu.Unlock()
	s, out := c.session()
	if s == nil {
		return nil, nil, unavailable(c.cfg.Name, out)
	}
	if s.client.GetServerCapabilities().Prompts == nil {
		return nil, map[string]pin.Tool{}, nil
	}
	s.rec.take(mcp.MethodPromptsList)
	res, err := s.client.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil {
		return nil, nil, fmt.Errorf("prompts/list: %w", s.explain(err))
	}
	raw, err := rawPrompts(s.rec.take(mcp.MethodPromptsList))
	if err != nil {
		return nil, nil, fmt.Errorf("prompts/list: %w", err)
	}
	pinned, err := pin.Prompts(c.ServerInfo(), raw)
	if err != nil {
		return nil, nil, fmt.Errorf("prompts/list: its listing cannot be pinned: %w", err)
	}
	return res.Prompts, pinned, nil
}

// OffersResources reports whether the upstream said, when it started,
// that it has resources.
func (c *Conn) OffersResources() bool {
	s, _ := c.session()
	return s != nil && s.client.GetServerCapabilities().Resources != nil
}

// ListResources lists the upstream's resources (every page), as the
// upstream names them; none when it offers none.
func (c *Conn) ListResources(ctx context.Context) ([]mcp.Resource, error) {
	s, out := c.session()
	if s == nil {
		return nil, unavailable(c.cfg.Name, out)
	}
	if s.client.GetServerCapabilities().Resources == nil {
		return nil, nil
	}
	res, err := s.client.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		return nil, fmt.Errorf("resources/list: %w", s.explain(err))
	}
	return res.Resources, nil
}

// ListResourceTemplates lists the upstream's resource templates (every
// page), as the upstream writes them; none when it offers no resources.
func (c *Conn) ListResourceTemplates(ctx context.Context) ([]mcp.ResourceTemplate, error) {
	s, out := c.session()
	if s == nil {
		return nil, unavailable(c.cfg.Name, out)
	}
	if s.client.GetServerCapabilities().Resources == nil {
		return nil, nil
	}
	res, err := s.client.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil {
		return nil, fmt.Errorf("resources/templates/list: %w", s.explain(err))
	}
	return res.ResourceTemplates, nil
}

// GetPrompt gets the upstream's prompt (its own name) with args, under
// the call's context. What the guard must tell the model (the upstream
// is down, did not answer, refused) is a *toolerr.Error.
func (c *Conn) GetPrompt(ctx context.Context, prompt string, args map[string]string) (*mcp.GetPromptResult, error) {
	s, out := c.session()
	if s == nil {
		return nil, unavailable(c.cfg.Name, out)
	}
	req := mcp.GetPromptRequest{}
	req.Params.Name, req.Params.Arguments = prompt, args
	res, err := s.client.GetPrompt(ctx, req)
	if err != nil {
		return nil, callError(ctx, c.cfg.Name, s.explain(err))
	}
	return res, nil
}

// ReadResource reads the upstream's resource uri (its own URI). Errors
// as GetPrompt's; an unknown resource is toolerr.NotFound.
func (c *Conn) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	s, out := c.session()
	if s == nil {
		return nil, unavailable(c.cfg.Name, out)
	}
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := s.client.ReadResource(ctx, req)
	if err != nil {
		if ctx.Err() == nil && strings.Contains(strings.ToLower(err.Error()), "not found") {
			return nil, toolerr.New(toolerr.NotFound, "List the resources again: this one does not exist.",
				"upstream %q has no resource %q: %v", c.cfg.Name, uri, err)
		}
		return nil, callError(ctx, c.cfg.Name, s.explain(err))
	}
	return res, nil
}

// ConnectTransport is Connect over a transport already made, such as an
// in-process server's: no process, no restart. The server's tests serve
// their fake upstreams so.
func ConnectTransport(ctx context.Context, u configs.Upstream, t transport.Interface, version string) (*Conn, error) {
	return connect(ctx, u, t, version)
}

// OnListChanged calls f, on a goroutine of its own, with the method of
// each notifications/prompts/list_changed and
// notifications/resources/list_changed the upstream sends.
func (c *Conn) OnListChanged(f func(mcp.MCPMethod)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lists = append(c.lists, f)
}

// watchLists passes s's prompt and resource list_changed notifications
// to the OnListChanged functions.
func (c *Conn) watchLists(s *session) {
	s.client.OnNotification(func(n mcp.JSONRPCNotification) {
		m := mcp.MCPMethod(n.Method)
		if m != mcp.MethodNotificationPromptsListChanged && m != mcp.MethodNotificationResourcesListChanged {
			return
		}
		c.mu.Lock()
		fs := slices.Clone(c.lists)
		c.mu.Unlock()
		for _, f := range fs {
			go f(m)
		}
	})
}
