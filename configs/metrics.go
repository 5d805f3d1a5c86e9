package configs

import (
	"fmt"
	"net"
)

// Metrics configures the Prometheus endpoint (docs/observability.md).
type Metrics struct {
	// Addr is the listen address of /metrics, e.g. 127.0.0.1:9464; empty
	// serves no metrics.
	Addr string `mapstructure:"addr" yaml:"addr"`
	// AllowRemote allows a non-loopback Addr: metrics name the tools,
	// rules and build, which a network scanner has no need to learn.
	AllowRemote bool `mapstructure:"allow_remote" yaml:"allow_remote"`
}

func (m Metrics) validate(add func(string, string, ...any)) {
	if m.Addr == "" {
		return
	}
	host, _, err := net.SplitHostPort(m.Addr)
	if err != nil {
		add("metrics.addr", "%q is not host:port: %v", m.Addr, err)
		return
	}
	if !IsLoopback(host) && !m.AllowRemote {
		add("metrics.addr", "%q is not a loopback address; set metrics.allow_remote: true to serve metrics on other interfaces", m.Addr)
	}
}

// metricsWidenings names a metrics listener allowed off loopback.
func metricsWidenings(l *Loaded) []string {
	m := l.Config.Metrics
	if !m.AllowRemote {
		return nil
	}
	return []string{fmt.Sprintf("metrics.allow_remote is true: metrics.addr %q may listen off loopback (from %s)", m.Addr, l.Origin("metrics.allow_remote"))}
}
