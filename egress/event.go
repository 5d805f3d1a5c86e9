package egress

import "time"

// Event is one connection through the proxy, for the audit log and
// /metrics. It never holds a credential's value.
type Event struct {
	CallID string
	Host   string // as asked for, lower-case
	Port   uint16
	// Addr is the address dialled; empty when refused before dialling.
	Addr    string
	Allowed bool
	// Rule names what refused or cut the connection (a config key or a
	// limit); empty for an allowed connection that ended normally.
	Rule               string
	BytesUp, BytesDown int64
	CredentialInjected bool
	// Finding is, on a refusal by RuleDLP, what found it: the secret
	// scanner's rule ID (gitleaks') or one of the proxy's own checks. It
	// never holds what was found.
	Finding  string
	Start    time.Time
	Duration time.Duration
}

// The rules that are not a config key of the network block.
const (
	RuleTarget       = "egress.target"   // not a plain name or address
	RuleMethod       = "egress.method"   // neither CONNECT nor an absolute http URI
	RuleTLSOnly      = "egress.tls_only" // CONNECT carrying something other than TLS
	RuleSNI          = "egress.sni"      // ClientHello without or with another name
	RuleResolve      = "egress.resolve"  // the name does not resolve
	RuleDial         = "egress.dial"     // no resolved address answered
	RuleMaxConns     = "limits.max_connections"
	RuleMaxBytesUp   = "limits.max_bytes_up"
	RuleMaxBytesDown = "limits.max_bytes_down"
	RuleIdle         = "limits.idle_timeout"
	RuleTotal        = "limits.total_timeout"
)
