package metrics

import "github.com/prometheus/client_golang/prometheus"

// OtherHost is the host label of a connection the egress proxy refused:
// the name a sandbox asks for is its own choice, so it never becomes a
// label value.
const OtherHost = "other"

// egress holds the egress proxy's counters.
type egress struct {
	conns *prometheus.CounterVec
	bytes *prometheus.CounterVec
	hosts *capped
}

func (m *Metrics) newEgress() *egress {
	return &egress{
		conns: m.counterVec("egress_connections_total", "Connections of sandboxes through the egress proxy, by host (allowlisted hosts only; other for a refused one), outcome (allowed, denied) and rule (what refused or cut it; none).", "host", "outcome", "rule"),
		bytes: m.counterVec("egress_bytes_total", "Bytes through the egress proxy, by allowlisted host and direction (up: sent by the sandbox; down: received).", "host", "direction"),
		hosts: newCapped(maxRules),
	}
}

// Egress counts one connection through the egress proxy. host is the
// host it reached, which the allow list named; a refused connection is
// counted under OtherHost whatever it asked for. rule is what refused or
// cut it ("" for none).
func (m *Metrics) Egress(host string, allowed bool, rule string, up, down int64) {
	outcome := "allowed"
	if !allowed {
		outcome, host = "denied", OtherHost
	}
	host = m.egress.hosts.label(host)
	if rule == "" {
		rule = "none"
	}
	m.egress.conns.WithLabelValues(host, outcome, m.rules.label(rule)).Inc()
	if up > 0 {
		m.egress.bytes.WithLabelValues(host, "up").Add(float64(up))
	}
	if down > 0 {
		m.egress.bytes.WithLabelValues(host, "down").Add(float64(down))
	}
}
