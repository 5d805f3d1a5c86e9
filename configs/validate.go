package configs

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"go.yaml.in/yaml/v3"

	"github.com/toolwarden/toolwarden/internal/lazyregexp"
)

// fieldError is one invalid key; Load reports it with its source.
type fieldError struct{ key, reason string }

// controlArgName is what a client control argument may be called.
var controlArgName = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)

func (l *Loaded) validate() error {
	c := &l.Config
	var errs []fieldError
	add := func(key, format string, args ...any) {
		errs = append(errs, fieldError{key, fmt.Sprintf(format, args...)})
	}
	if err := c.resolveWorkspace(); err != nil {
		add("workspace", "%v", err)
	}
	for _, list := range []struct {
		key   string
		globs []string
	}{{"policy.allow", c.Policy.Allow}, {"policy.deny", c.Policy.Deny}, {"policy.require_trust", c.Policy.RequireTrust}, {"policy.private_tools", c.Policy.PrivateTools}} {
		for _, g := range list.globs {
			if g == "" || !doublestar.ValidatePattern(g) {
				add(list.key, "%q is not a valid tool-name glob", g)
			}
		}
	}
	switch c.Policy.Taint {
	case "", "approve", "refuse", "off":
	default:
		add("policy.taint", "%q is not approve, refuse or off", c.Policy.Taint)
	}
	for _, name := range c.Policy.ClientControlArgs {
		if !controlArgName.MatchString(name) {
			add("policy.client_control_args", "%q is not an argument name (letters, digits, _ and -)", name)
		}
	}
	positive(add, "limits.max_calls_per_session", int64(c.Limits.MaxCallsPerSession))
	positive(add, "limits.max_output_bytes_per_session", c.Limits.MaxOutputBytesPerSession)
	positive(add, "limits.max_output_bytes_per_call", int64(c.Limits.MaxOutputBytesPerCall))
	durationIn(add, "limits.call_timeout", c.Limits.CallTimeout, time.Hour)
	if g := c.Limits.TimeoutGrace; g < 0 || g > time.Minute {
		add("limits.timeout_grace", "must be between 0 and %s, got %s", time.Minute, g)
	}
	positive(add, "limits.max_abandoned", int64(c.Limits.MaxAbandoned))
	durationIn(add, "limits.window", c.Limits.Window, 31*24*time.Hour)
	c.Limits.validatePolicy(add)
	c.Capabilities.validate(add)
	c.FS.validate(add)
	c.HTTP.validate(add)
	c.HTTP.validateIdentities(add)
	c.HTTP.validateOAuth(add)
	validateIdentityRules(c.Identities, add)
	c.Exec.validate(add)
	c.Approval.validate(add)
	c.Artifacts.validate(add)
	c.Graph.validate(add)
	c.Cluster.validate(add)
	c.Tasks.validate(add)
	c.OutputFilter.validate(add)
	c.Arguments.validate(add)
	c.validateSecrets(add)
	c.Audit.validate(add, c.Artifacts)
	c.Metrics.validate(add)
	c.Bridge.validate(add)
	validatePins(c.UpstreamPins, add)
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.Log.Level) {
		add("log.level", "%q is not one of debug, info, warn, error", c.Log.Level)
	}
	return l.report(errs)
}

func (f FS) validate(add func(string, string, ...any)) {
	positive(add, "fs.max_read_bytes", f.MaxReadBytes)
	positive(add, "fs.max_files_per_read", int64(f.MaxFilesPerRead))
	positive(add, "fs.max_write_bytes", f.MaxWriteBytes)
	positive(add, "fs.max_tree_depth", int64(f.MaxTreeDepth))
	positive(add, "fs.max_tree_entries", int64(f.MaxTreeEntries))
	positive(add, "fs.max_search_results", int64(f.MaxSearchResults))
	positive(add, "fs.max_grep_matches", int64(f.MaxGrepMatches))
	positive(add, "fs.max_grep_file_bytes", f.MaxGrepFileBytes)
}

func (h HTTP) validate(add func(string, string, ...any)) {
	positive(add, "http.max_body_bytes", h.MaxBodyBytes)
	positive(add, "http.max_sessions", int64(h.MaxSessions))
	positive(add, "http.max_streams_per_identity", int64(h.MaxStreamsPerIdentity))
	durationIn(add, "http.session_idle_timeout", h.SessionIdleTimeout, 24*time.Hour)
	if h.Addr == "" {
		return
	}
	host, _, err := net.SplitHostPort(h.Addr)
	if err != nil {
		add("http.addr", "%q is not host:port: %v", h.Addr, err)
		return
	}
	if !IsLoopback(host) && !h.AllowRemote {
		add("http.addr", "%q is not a loopback address; set http.allow_remote: true to listen on other interfaces", h.Addr)
	}
}

func (h HTTP) validateOAuth(add func(string, string, ...any)) {
	if h.PublicURL != "" {
		checkURL(add, "http.public_url", h.PublicURL)
	}
	o := h.OAuth
	if g := o.ClockSkew; g < 0 || g > 5*time.Minute {
		add("http.oauth.clock_skew", "must be between 0 and %s, got %s", 5*time.Minute, g)
	}
	if !o.Enabled() {
		return
	}
	checkURL(add, "http.oauth.issuer", o.Issuer)
	if in := o.Introspection; in.Enabled && in.Endpoint != "" {
		checkURL(add, "http.oauth.introspection.endpoint", in.Endpoint)
	}
	if h.ResourceURL() == "" {
		add("http.oauth.audience", "set http.oauth.audience or http.public_url: tokens must name this server")
	}
}

// checkURL requires an absolute https URL, or http on a loopback host.
func checkURL(add func(string, string, ...any), key, s string) {
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		add(key, "%q is not an absolute http(s) URL", s)
	case u.Scheme == "http" && !IsLoopback(u.Hostname()):
		add(key, "%q must use https (http only on a loopback host)", s)
	}
}

// IsLoopback reports whether host is "localhost" or a loopback IP.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}

func positive(add func(string, string, ...any), key string, v int64) {
	if v <= 0 {
		add(key, "must be greater than 0, got %d", v)
	}
}

func durationIn(add func(string, string, ...any), key string, d, most time.Duration) {
	if d <= 0 || d > most {
		add(key, "must be between 0 and %s, got %s", most, d)
	}
}

func (c *Config) resolveWorkspace() error {
	dir := c.Workspace
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return fmt.Errorf("workspace %s: %w", abs, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("workspace %s is not a directory", abs)
	}
	c.Workspace = abs
	return nil
}

// report formats errors as "source[:line]: key: reason", one per line.
func (l *Loaded) report(errs []fieldError) error {
	if len(errs) == 0 {
		return nil
	}
	var data []byte
	if l.File != "" {
		data, _ = os.ReadFile(l.File)
	}
	lines := make([]string, 0, len(errs))
	for _, e := range errs {
		src := l.Origin(e.key)
		if src == l.File && data != nil {
			if n := lineOf(data, e.key); n > 0 {
				src = fmt.Sprintf("%s:%d", src, n)
			}
		}
		lines = append(lines, fmt.Sprintf("%s: %s: %s", src, e.key, e.reason))
	}
	return joinLines(lines)
}

// widenings lists how the effective config is wider than the built-in one.
func widenings(l *Loaded) []string {
	var def Config
	_ = yaml.Unmarshal(defaultYAML, &def)
	var out []string
	for _, g := range l.Config.Policy.Allow {
		if slices.Contains(def.Policy.Allow, g) {
			continue
		}
		src := l.Origin("policy.allow")
		if slices.Contains(l.origin.flagAllow, g) {
			src = "flag --allow"
		}
		out = append(out, fmt.Sprintf("policy.allow adds %q (from %s)", g, src))
	}
	out = append(out, policyWidenings(l, def.Capabilities)...)
	out = append(out, secretWidenings(l, def.Capabilities)...)
	out = append(out, artifactWidenings(l)...)
	out = append(out, outputFilterWidenings(l)...)
	out = append(out, argumentWidenings(l)...)
	if g := l.Config.Graph; g.URI != "" {
		out = append(out, fmt.Sprintf("graph.uri connects the graph toolset to %s as %q (from %s)", g.URI, g.Username, l.Origin("graph.uri")))
	}
	out = append(out, approvalWidenings(l)...)
	c := l.Config.HTTP
	if c.AllowRemote {
		out = append(out, "http.allow_remote is true (from "+l.Origin("http.allow_remote")+")")
	}
	for _, h := range c.AllowedHosts {
		out = append(out, fmt.Sprintf("http.allowed_hosts adds %q (from %s)", h, l.Origin("http.allowed_hosts")))
	}
	for _, o := range c.AllowedOrigins {
		out = append(out, fmt.Sprintf("http.allowed_origins adds %q (from %s)", o, l.Origin("http.allowed_origins")))
	}
	out = append(out, declaredWidenings(l)...)
	out = append(out, upstreamWidenings(l)...)
	out = append(out, metricsWidenings(l)...)
	return append(out, execWidenings(l, def.Exec)...)
}
