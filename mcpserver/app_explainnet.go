package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
)

// ToolNetwork is what config check says of one tool's network block:
// the block it uses, its allow list, and its brokered hosts by header
// name (never a value or where the value comes from).
type ToolNetwork struct {
	Block    string   `yaml:"block" json:"block"`
	Allow    []string `yaml:"allow" json:"allow"`
	Brokered []string `yaml:"brokered,omitempty" json:"brokered,omitempty"`
}

// toolNetworks maps each tool that has network to its block, as the
// server wires them (mcpserver/egress.go): run_script and run_command use
// exec.network, a declared cli tool its own block and never exec.network.
// A tool without an entry has no network.
func toolNetworks(cfg configs.Config) map[string]ToolNetwork {
	out := map[string]ToolNetwork{}
	if n := cfg.Exec.Network; n.Enabled() {
		for _, tool := range []string{"run_script", "run_command"} {
			out[tool] = toolNetwork("exec.network", n)
		}
	}
	for i, t := range cfg.Tools {
		if t.Type == configs.ToolCLI && t.Network.Enabled() {
			out[t.Name] = toolNetwork(fmt.Sprintf("tools[%d].network", i), t.Network)
		}
	}
	return out
}

func toolNetwork(key string, n configs.Network) ToolNetwork {
	out := ToolNetwork{Block: key, Allow: append([]string(nil), n.Allow...)}
	if len(n.Credentials) > 0 {
		out.Brokered = brokered(n)
	}
	return out
}

// NetworkReach is what policy explain says of a tool's network: the
// block, and for each allow entry whether this caller's net:connect
// capabilities let a run reach it and by which rule.
type NetworkReach struct {
	Block string      `json:"block"`
	Hosts []HostReach `json:"hosts"`
}

// HostReach is one allow entry for one caller.
type HostReach struct {
	Allow     string `json:"allow"`
	Reachable bool   `json:"reachable"`
	Rule      string `json:"rule"`
	// Brokered names the header the proxy puts a credential into, when
	// the host has one.
	Brokered string `json:"brokered,omitempty"`
}

// wildcardSample stands for "a name below the wildcard's domain" when a
// wildcard entry is decided: the decision holds for every name no rule
// names on its own.
const wildcardSample = "any-name"

// explainNetwork says which of the tool's network hosts the caller of ctx
// could reach: the allow list intersected with the caller's net:connect
// capabilities, decided by the same code as the proxy's (PermitsConnect).
// nil when the tool has no network.
func (s *Server) explainNetwork(ctx context.Context, cfg configs.Config, name string, args json.RawMessage, trusted bool) *NetworkReach {
	tn, ok := toolNetworks(cfg)[name]
	if !ok {
		return nil
	}
	if trusted {
		ctx = context.WithValue(ctx, trustedKey, true)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.RawArguments = args
	call, _, _ := s.callOf(ctx, req)
	headers := map[string]string{}
	for _, b := range networkOf(cfg, tn.Block).Credentials {
		headers[strings.ToLower(b.Host)] = b.Header
	}
	out := &NetworkReach{Block: tn.Block, Hosts: []HostReach{}}
	for _, entry := range tn.Allow {
		a, err := configs.ParseNetAllow(entry)
		if err != nil { // refused at load; not reached
			continue
		}
		host := a.Host
		switch {
		case a.Addr.IsValid():
			host = a.Addr.String()
		case a.Wildcard:
			host = wildcardSample + "." + a.Host
		}
		rule, ok := s.guard.PermitsConnect(call, host, a.Port)
		h := HostReach{Allow: entry, Reachable: ok, Rule: rule}
		if !a.Wildcard && !a.Addr.IsValid() {
			h.Brokered = headers[a.Host]
		}
		out.Hosts = append(out.Hosts, h)
	}
	return out
}

// networkOf is the block config key names.
func networkOf(cfg configs.Config, key string) configs.Network {
	if key == "exec.network" {
		return cfg.Exec.Network
	}
	for i, t := range cfg.Tools {
		if fmt.Sprintf("tools[%d].network", i) == key {
			return t.Network
		}
	}
	return configs.Network{}
}

// printNetwork writes n as policy explain prints it, after the decision
// d: for a call that would not run, what its runs could reach were it
// allowed.
func printNetwork(w io.Writer, n *NetworkReach, d guard.Decision) {
	if n == nil {
		return
	}
	when := ""
	if d.Outcome != guard.Allow && d.Outcome != guard.NeedsApproval {
		when = ", were the call allowed"
	}
	fmt.Fprintf(w, "network (%s.allow ∩ the caller's net:connect%s):\n", n.Block, when)
	for _, h := range n.Hosts {
		verdict := "reachable"
		if !h.Reachable {
			verdict = "refused"
		}
		fmt.Fprintf(w, "  %-10s %s (rule %s)", verdict, h.Allow, h.Rule)
		if h.Brokered != "" {
			fmt.Fprintf(w, ", credential brokered into %s", h.Brokered)
		}
		fmt.Fprintln(w)
	}
	if len(n.Hosts) > 0 && hasWildcard(n) {
		fmt.Fprintln(w, "  (a *. entry is decided for a name no net:connect rule names itself; a rule naming one decides that one)")
	}
}

func hasWildcard(n *NetworkReach) bool {
	for _, h := range n.Hosts {
		if strings.HasPrefix(h.Allow, "*.") {
			return true
		}
	}
	return false
}
