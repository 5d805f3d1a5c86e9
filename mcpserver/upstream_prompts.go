package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/upstream"
	"github.com/toolwarden/toolwarden/tools/upstream/pin"
)

// promptSource is one connected upstream (upstreams[i]) whose prompts are
// offered.
type promptSource struct {
	conn *upstream.Conn
	i    int
	u    configs.Upstream
}

// listPrompts lists the prompts of u, pins them and compares them with
// their pins (pins applies upstream_pins). It returns the prompts, by
// own name those refused as drift (none under warn), and whether which
// are refused changed.
func listPrompts(ctx context.Context, conn *upstream.Conn, u configs.Upstream, pins *pinGate) ([]mcp.Prompt, map[string]bool, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, u.Timeout())
	defer cancel()
	prompts, pinned, err := conn.ListPrompts(ctx)
	if err != nil {
		return nil, nil, false, fmt.Errorf("its prompts could not be listed and pinned: %w", err)
	}
	changes, hiddenChanged := pins.checkPrompts(u.Name, conn.ServerInfo(), pinned)
	return prompts, driftedOf(pins, changes), hiddenChanged, nil
}

// driftedOf are the own names of the changes refused under the mode.
func driftedOf(pins *pinGate, changes []pin.Change) map[string]bool {
	out := map[string]bool{}
	if pins == nil || pins.mode == configs.PinsWarn {
		return out
	}
	for _, c := range changes {
		out[c.Tool] = true
	}
	return out
}

// promptOffers are the upstream prompts registered now, by namespaced
// name: what a get runs. A relisting replaces an upstream's.
type promptOffers struct {
	cfg       configs.Config
	resources []string // the names of the resources items
	relisting sync.Mutex
	mu        sync.Mutex
	byName    map[string]upstreamPrompt
}

func newPromptOffers(items upstreamItems) *promptOffers {
	o := &promptOffers{cfg: items.cfg, byName: map[string]upstreamPrompt{}}
	for _, p := range items.prompts {
		o.byName[p.item.Tool.Name] = p
	}
	for _, r := range items.resources {
		o.resources = append(o.resources, r.item.Tool.Name)
	}
	return o
}

func (o *promptOffers) get(name string) (upstreamPrompt, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	p, ok := o.byName[name]
	return p, ok
}

// changes are the prompts of now (upstream's, listed again) that are new
// or differ from those registered, and the names registered that now
// lacks, but not those hidden as drift, which stay registered so that
// their gets are answered with denied.tool_drift.
func (o *promptOffers) changes(upstreamName string, now map[string]upstreamPrompt, hidden func(string) bool) (add []upstreamPrompt, del []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	prefix := upstreamName + configs.UpstreamSep
	for name, p := range now {
		if old, ok := o.byName[name]; !ok || promptKey(old) != promptKey(p) {
			add = append(add, p)
		}
	}
	for name := range o.byName {
		if _, ok := now[name]; !ok && strings.HasPrefix(name, prefix) && !hidden(name) {
			del = append(del, name)
		}
	}
	slices.SortFunc(add, func(a, b upstreamPrompt) int { return strings.Compare(a.item.Tool.Name, b.item.Tool.Name) })
	slices.Sort(del)
	return add, del
}

// promptKey is what tells two offerings of a prompt apart.
func promptKey(p upstreamPrompt) string {
	b, _ := json.Marshal(p.offered)
	return p.own + "\x00" + string(b) + "\x00" + string(p.item.Tool.RawInputSchema)
}

func (o *promptOffers) commit(add []upstreamPrompt, del []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, p := range add {
		o.byName[p.item.Tool.Name] = p
	}
	for _, name := range del {
		delete(o.byName, name)
	}
}

// taken maps every name a prompt of upstreamName may not take to what
// has it: built-in, declared and offered tools, resources items, and the
// other upstreams' prompts.
func (o *promptOffers) taken(s *Server, upstreamName string) map[string]string {
	taken := reservedNames(o.cfg)
	for name := range s.mcp.ListTools() {
		taken[name] = "a tool"
	}
	for _, name := range o.resources {
		taken[name] = "a resources item"
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for name := range o.byName {
		if !strings.HasPrefix(name, upstreamName+configs.UpstreamSep) {
			taken[name] = "a prompt of another upstream"
		}
	}
	return taken
}

// watchUpstreamLists acts on an upstream's list_changed notifications:
// its resources are listed live, so clients are told to list them again;
// its prompts are listed again and compared (relistPrompts), and so they
// are after each restart of the upstream.
func (s *Server) watchUpstreamLists(items upstreamItems, offers *promptOffers) {
	for _, src := range items.upstreams {
		relist := new(coalesced) // a flood of list_changed: one listing at a time, one more after
		src.conn.OnListChanged(func(m mcp.MCPMethod) {
			switch m {
			case mcp.MethodNotificationResourcesListChanged:
				if src.conn.OffersResources() {
					s.mcp.SendNotificationToAllClients(string(mcp.MethodNotificationResourcesListChanged), nil)
				}
			case mcp.MethodNotificationPromptsListChanged:
				relist.do(func() { s.relistPrompts(offers, src) })
			}
		})
		src.conn.OnEvent(func(e upstream.Event) {
			if e.Kind == upstream.EventRestarted {
				// The restart loop must not wait for a listing.
				go relist.do(func() { s.relistPrompts(offers, src) })
			}
		})
	}
}

// relistPrompts lists an upstream's prompts again, after it said they
// changed or was restarted, compares them with their pins and offers
// them as at start: a prompt refused as drift (upstream_pins block or
// trust_on_first_use) is hidden and its gets get denied.tool_drift; one
// back to its pinned definition is offered again; a new one (pinned, or
// under warn) is offered, its item known to the guard with its default
// grant; one no longer listed goes. The clients are told with
// notifications/prompts/list_changed.
func (s *Server) relistPrompts(offers *promptOffers, src promptSource) {
	offers.relisting.Lock()
	defer offers.relisting.Unlock()
	list, drifted, hiddenChanged, err := listPrompts(context.Background(), src.conn, src.u, s.pins)
	if err != nil {
		s.log.Warn("upstream prompts could not be listed again; the earlier ones stay", "upstream", src.u.Name, "err", err)
		return
	}
	taken := offers.taken(s, src.u.Name)
	check, err := newDefinitionCheck(offers.cfg, slices.Collect(maps.Keys(s.mcp.ListTools())))
	if err != nil {
		s.log.Warn("upstream prompts listed again could not be checked; the earlier ones stay", "upstream", src.u.Name, "err", err)
		return
	}
	now := map[string]upstreamPrompt{}
	for _, p := range list {
		up, reason := offerPrompt(src.conn, src.u, p, check, taken, drifted[p.Name])
		if reason != "" {
			s.log.Warn("upstream item withheld", "key", fmt.Sprintf("upstreams[%d]", src.i), "upstream", src.u.Name, "item", "prompt "+p.Name, "reason", reason)
			continue
		}
		now[up.item.Tool.Name] = up
	}
	add, del := offers.changes(src.u.Name, now, s.pins.promptHidden)
	if err := s.knowPrompts(add); err != nil {
		s.log.Error("upstream prompts listed again could not be offered; the earlier ones stay", "upstream", src.u.Name, "err", err)
		return
	}
	offers.commit(add, del)
	if len(add) > 0 {
		entries := make([]server.ServerPrompt, len(add))
		for i, p := range add {
			entries[i] = server.ServerPrompt{Prompt: p.offered, Handler: s.getUpstreamPrompt(offers, p.item.Tool.Name)}
		}
		s.mcp.AddPrompts(entries...) // one notification for them all
	}
	if len(del) > 0 {
		s.mcp.DeletePrompts(del...)
	}
	registered := len(add) > 0 || len(del) > 0
	if registered {
		s.watchOfferedNames()
	}
	// mcp-go told the clients of what it registered if the server
	// declared prompts' listChanged (it does with upstream tools); which
	// are refused changing is told here.
	if (registered && !hasUpstream(s.tools)) || (!registered && hiddenChanged) {
		s.mcp.SendNotificationToAllClients(string(mcp.MethodNotificationPromptsListChanged), nil)
	}
	s.log.Info("upstream prompts listed again", "upstream", src.u.Name, "prompts", len(now), "changed", len(add), "gone", len(del), "drift", len(drifted))
}

// knowPrompts makes the guard know the items of prompts offered after
// start as it knew those of start: schema, approval mode, limits, and
// the default grant of a read-only item.
func (s *Server) knowPrompts(prompts []upstreamPrompt) error {
	if len(prompts) == 0 {
		return nil
	}
	items := make([]tools.Tool, len(prompts))
	schemas := map[string]json.RawMessage{}
	for i, p := range prompts {
		items[i] = p.item
		schemas[p.item.Tool.Name] = p.item.Tool.RawInputSchema
	}
	if err := s.guard.SetTools(GuardInfo(items), schemas); err != nil {
		return err
	}
	return s.guard.GrantLater(upstreamGrants(items))
}
