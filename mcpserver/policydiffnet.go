package mcpserver

import (
	"fmt"

	"github.com/toolwarden/toolwarden/configs"
)

// diffNetwork compares the network blocks the egress proxy serves:
// exec.network and each declared cli tool's, by name. A host:port added
// to an allow list, and a credential the proxy newly puts into a host's
// requests (by header name, never its value), are widenings; so is
// turning the proxy's data-loss checks off.
func (d *PolicyDiff) diffNetwork(o, n configs.Config) {
	d.network("exec.network", o.Exec.Network, n.Exec.Network)
	old := cliNetworks(o)
	for name, nw := range cliNetworks(n) {
		d.network("tools."+name+".network", old[name], nw)
	}
	for name, nw := range old {
		if _, kept := cliNetworks(n)[name]; !kept {
			d.network("tools."+name+".network", nw, configs.Network{})
		}
	}
}

func (d *PolicyDiff) network(key string, o, n configs.Network) {
	d.list("network", key+".allow", o.Allow, n.Allow, true)
	d.list("network", key+".credentials", brokered(o), brokered(n), true)
	if o.DLP.Off != n.DLP.Off && (o.Enabled() || n.Enabled()) {
		d.add(rankIf(o.DLP.Off), rankIf(n.DLP.Off), Change{Kind: "network", Item: key + ".dlp.off",
			Old: fmt.Sprint(o.DLP.Off), New: fmt.Sprint(n.DLP.Off)})
	}
}

// brokered names each credential as "host header", never its value.
func brokered(n configs.Network) []string {
	out := make([]string, 0, len(n.Credentials))
	for _, c := range n.Credentials {
		out = append(out, fmt.Sprintf("%s %s", c.Host, c.Header))
	}
	return out
}

func cliNetworks(cfg configs.Config) map[string]configs.Network {
	out := map[string]configs.Network{}
	for _, t := range cfg.Tools {
		if t.Type == configs.ToolCLI {
			out[t.Name] = t.Network
		}
	}
	return out
}
