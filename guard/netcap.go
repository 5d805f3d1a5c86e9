package guard

import (
	"fmt"
	"net"
	"strconv"

	"github.com/toolwarden/toolwarden/internal/capability"
)

// PermitsConnect decides one connection a sandbox of call's caller asks
// the egress proxy for, after the network block's allow list let it
// through: the caller must hold net:connect:host:port as any tool's need
// (granted by capabilities.grant and every identities rule that has a
// grant list, denied by no capabilities.deny or identities revoke). host
// is a DNS name or an IP address (IPv6 bracketed or not). A refusal
// returns the rule that refused, in the form tool calls' denials use.
func (g *Guard) PermitsConnect(call Call, host string, port uint16) (rule string, ok bool) {
	if len(host) > 1 && host[0] == '[' {
		host = host[1 : len(host)-1]
	}
	need := capability.Capability{Resource: "net", Verb: "connect", Scope: net.JoinHostPort(host, strconv.Itoa(int(port)))}
	layers := layersOf(g.cfg.Identities, call)
	p := g.cfg.Policy
	if i := firstCovering(p.Revoked, nil, need, capability.Denies); i >= 0 {
		return fmt.Sprintf("capabilities.deny:%q", p.Revoked[i].String()), false
	}
	for _, l := range layers {
		if i := firstCovering(l.Revoke, nil, need, capability.Denies); i >= 0 {
			return fmt.Sprintf("identities[%s].revoke:%q", l.Name, l.Revoke[i].String()), false
		}
	}
	if firstCovering(p.Grants, nil, need, capability.Covers) < 0 {
		return "capabilities.missing", false
	}
	if l := layerMissing(layers, need); l != nil {
		return "identities[" + l.Name + "].grant", false
	}
	return "capabilities.granted", true
}
