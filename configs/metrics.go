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
	m.check(add, "metrics.addr", "set metrics.allow_remote: true")
}

func (m Metrics) check(add func(string, string, ...any), key, allow string) {
	if m.Addr == "" {
		return
	}
	host, _, err := net.SplitHostPort(m.Addr)
	if err != nil {
		add(key, "%q is not host:port: %v", m.Addr, err)
		return
	}
	if !IsLoopback(host) && !m.AllowRemote {
		add(key, "%q is not a loopback address; %s to serve metrics on other interfaces", m.Addr, allow)
	}
}

// CheckFlag checks a metrics address given by a command's flag (such as
// `toolwarden gemini --metrics`) as metrics.addr is checked: host:port,
// on loopback unless allowFlag, which sets AllowRemote, is given.
func (m Metrics) CheckFlag(flag, allowFlag string) error {
	var err error
	m.check(func(key, format string, args ...any) { err = fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)) },
		flag, "pass "+allowFlag)
	return err
}

// metricsWidenings names a metrics listener allowed off loopback.
func metricsWidenings(l *Loaded) []string {
	m := l.Config.Metrics
	if !m.AllowRemote {
		return nil
	}
	return []string{fmt.Sprintf("metrics.allow_remote is true: metrics.addr %q may listen off loopback (from %s)", m.Addr, l.Origin("metrics.allow_remote"))}
}
