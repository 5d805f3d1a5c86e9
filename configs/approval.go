package configs

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/spf13/pflag"

	"github.com/toolwarden/toolwarden/internal/lazyregexp"
)

// Approval configures the human approval of tool calls through MCP
// elicitation.
type Approval struct {
	// Timeout is how long the human has to answer, and how long an
	// answer stays valid for the exact arguments it approved.
	Timeout time.Duration `mapstructure:"timeout" yaml:"timeout"`
	// Modes maps tool-name globs to allow, elicit or deny. Tools that no
	// glob matches elicit when they require approval and run otherwise;
	// where several globs match, the most restrictive mode wins.
	Modes map[string]string `mapstructure:"modes" yaml:"modes"`
	// Channel lists, in order of preference, how the human is asked: the
	// first that can ask for a call does. elicit needs a client that
	// declared elicitation; page (the approval page) and terminal
	// (`toolwarden approvals` over the control socket) do not depend on
	// the client, and when one is chosen a call waits on all of them.
	Channel []string `mapstructure:"channel" yaml:"channel"`
	// MaxPending caps the calls that wait at once on the page, the
	// terminal and the webhook.
	MaxPending ApprovalMaxPending `mapstructure:"max_pending" yaml:"max_pending"`
	// Page configures the approval page (channel page).
	Page ApprovalPage `mapstructure:"page" yaml:"page"`
	// Webhook configures the webhook (channel webhook).
	Webhook ApprovalWebhook `mapstructure:"webhook" yaml:"webhook"`
}

// ApprovalMaxPending caps the calls that wait for a human at once on the
// page, the terminal and the webhook, in this server process. Each holds
// its arguments while it waits, and nobody may be looking: without a cap
// one identity could fill the server's memory, and the page, with calls
// nobody answers. A call past a cap is refused at once (limit.exceeded).
type ApprovalMaxPending struct {
	// PerIdentity caps one identity's waiting calls (each HTTP token or
	// OAuth subject, or the local client).
	PerIdentity int `mapstructure:"per_identity" yaml:"per_identity"`
	// Total caps the waiting calls of all identities together.
	Total int `mapstructure:"total" yaml:"total"`
}

// maxPendingCeiling bounds approval.max_pending.total: more calls than a
// human can read one by one is no longer a queue of decisions.
const maxPendingCeiling = 4096

func (m ApprovalMaxPending) validate(add func(string, string, ...any)) {
	if m.Total < 1 || m.Total > maxPendingCeiling {
		add("approval.max_pending.total", "must be between 1 and %d, got %d", maxPendingCeiling, m.Total)
	}
	if m.PerIdentity < 1 || m.PerIdentity > m.Total {
		add("approval.max_pending.per_identity", "must be between 1 and approval.max_pending.total (%d), got %d", m.Total, m.PerIdentity)
	}
}

// ApprovalWebhook configures the webhook channel: waiting calls are
// POSTed, signed, to URL, and decisions come back, signed, to the
// callback listener.
type ApprovalWebhook struct {
	// SecretSources is where the section's secrets come from (bound by Load).
	SecretSources `mapstructure:"-" yaml:"-" json:"-"`
	URL           string `mapstructure:"url" yaml:"url"`
	// SecretEnv names the environment variable holding the shared HMAC
	// secret (never the config file: it would sit in backups and diffs).
	SecretEnv string `mapstructure:"secret_env" yaml:"secret_env"`
	// SecretFile and SecretVault are the other places the secret may come
	// from (secrets.go).
	SecretFile  string `mapstructure:"secret_file" yaml:"secret_file"`
	SecretVault string `mapstructure:"secret_vault" yaml:"secret_vault"`
	// Listen is the callback listener's host:port.
	Listen string `mapstructure:"listen" yaml:"listen"`
	// PublicURL is the callback's URL as the webhook's receiver reaches
	// it (behind a proxy); default http://LISTEN/decide.
	PublicURL string `mapstructure:"public_url" yaml:"public_url"`
}

// ApprovalPage configures the approval page's own listener.
type ApprovalPage struct {
	// Addr is a loopback host:port; port 0 picks a free one.
	Addr string `mapstructure:"addr" yaml:"addr"`
}

// ApprovalModes are the approval modes, from the least restrictive.
var ApprovalModes = []string{"allow", "elicit", "deny"}

// ApprovalChannels are the ways to ask the human (approval.channel).
var ApprovalChannels = []string{"elicit", "page", "terminal", "webhook"}

// HasChannel reports whether approval.channel lists name.
func (a Approval) HasChannel(name string) bool { return slices.Contains(a.Channel, name) }

func (a Approval) validate(add func(string, string, ...any)) {
	durationIn(add, "approval.timeout", a.Timeout, time.Hour)
	if len(a.Channel) == 0 {
		add("approval.channel", "must list at least one channel (%s)", strings.Join(ApprovalChannels, ", "))
	}
	for i, c := range a.Channel {
		if !slices.Contains(ApprovalChannels, c) {
			add("approval.channel", "%q is not an approval channel (%s)", c, strings.Join(ApprovalChannels, ", "))
		} else if slices.Index(a.Channel, c) != i {
			add("approval.channel", "%q is listed twice", c)
		}
	}
	a.MaxPending.validate(add)
	if a.HasChannel("webhook") {
		a.Webhook.validate(add)
	}
	if a.HasChannel("page") && !loopbackAddr(a.Page.Addr) {
		add("approval.page.addr", "%q is not a loopback host:port (the page approves calls: it must not be reachable from other machines)", a.Page.Addr)
	}
	for _, g := range slices.Sorted(maps.Keys(a.Modes)) {
		if g == "" || !doublestar.ValidatePattern(g) {
			add("approval.modes", "%q is not a valid tool-name glob", g)
		}
		if !slices.Contains(ApprovalModes, a.Modes[g]) {
			add("approval.modes", "%q: %q is not an approval mode (allow, elicit or deny)", g, a.Modes[g])
		}
	}
}

// envName is the shape of an environment variable's name.
var envName = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (w ApprovalWebhook) validate(add func(string, string, ...any)) {
	if u, err := url.Parse(w.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		add("approval.webhook.url", "%q is not an http(s) URL", w.URL)
	}
	if !envName.MatchString(w.SecretEnv) && w.SecretFile == "" && w.SecretVault == "" {
		add("approval.webhook.secret_env", "%q is not an environment variable name (the secret itself never goes in the config)", w.SecretEnv)
	}
	if _, _, err := net.SplitHostPort(w.Listen); err != nil {
		add("approval.webhook.listen", "%q is not a host:port", w.Listen)
	}
	if w.PublicURL != "" {
		if u, err := url.Parse(w.PublicURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			add("approval.webhook.public_url", "%q is not an http(s) URL", w.PublicURL)
		}
	}
}

// loopbackAddr reports whether addr is a host:port on a loopback IP
// address (a name such as localhost could resolve elsewhere).
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ParseApprovalFlag splits a --approval value, TOOL_GLOB=MODE.
func ParseApprovalFlag(s string) (glob, mode string, err error) {
	glob, mode, ok := strings.Cut(s, "=")
	if !ok || glob == "" || !doublestar.ValidatePattern(glob) || !slices.Contains(ApprovalModes, mode) {
		return "", "", fmt.Errorf("--approval %q: want TOOL_GLOB=MODE with MODE allow, elicit or deny", s)
	}
	return glob, mode, nil
}

// approvalFlags returns the --approval values set on flags, if it has that
// flag.
func approvalFlags(flags *pflag.FlagSet) []string {
	if flags == nil || flags.Lookup("approval") == nil {
		return nil
	}
	v, _ := flags.GetStringArray("approval")
	return v
}

// addApprovalFlags adds --approval rules to the configured modes. A glob
// set in both keeps the more restrictive mode: flags can tighten the file
// but never loosen it.
func (c *Config) addApprovalFlags(flags []string) error {
	for _, f := range flags {
		glob, mode, err := ParseApprovalFlag(f)
		if err != nil {
			return err
		}
		if c.Approval.Modes == nil {
			c.Approval.Modes = map[string]string{}
		}
		if old, ok := c.Approval.Modes[glob]; !ok || slices.Index(ApprovalModes, mode) > slices.Index(ApprovalModes, old) {
			c.Approval.Modes[glob] = mode
		}
	}
	return nil
}

// approvalWidenings names every glob set to allow: the tools it matches run
// without asking the human, even those that require approval.
func approvalWidenings(l *Loaded) []string {
	var out []string
	for _, g := range slices.Sorted(maps.Keys(l.Config.Approval.Modes)) {
		if l.Config.Approval.Modes[g] != "allow" {
			continue
		}
		src := l.Origin("approval.modes")
		if slices.Contains(l.origin.flagApproval, g+"=allow") {
			src = "flag --approval"
		}
		out = append(out, fmt.Sprintf("approval.modes sets %q to allow: matching tools run without asking the human (from %s)", g, src))
	}
	return out
}
