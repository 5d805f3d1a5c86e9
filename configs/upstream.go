package configs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/toolwarden/toolwarden/internal/lazyregexp"
)

// Upstream is another MCP server whose tools toolwarden offers behind its
// guard, namespaced as <name>__<tool> (docs/upstreams.md). It is reached
// either by running Command and speaking MCP over its stdin and stdout, or
// at URL over streamable HTTP.
type Upstream struct {
	// Name prefixes its tools: [a-z0-9_]{1,24}, no "__", not ending in "_",
	// so that a namespaced name says which upstream it belongs to.
	Name string `mapstructure:"name" yaml:"name"`
	// Command is the argv of a local server (stdio). Its environment is
	// PATH and the Env entries only, never toolwarden's whole environment.
	Command []string `mapstructure:"command" yaml:"command"`
	// URL is a remote server's streamable HTTP endpoint: https, or http on
	// a loopback host.
	URL string `mapstructure:"url" yaml:"url"`
	// Env gives the upstream the variable NAME (upper case: keys are
	// case-insensitive) from one of three sources: NAME_env, the name of
	// a variable of toolwarden's environment (or secrets.dotenv);
	// NAME_file, the path of a file of mode 0600 or stricter; NAME_vault,
	// a Vault KV v2 reference (mount/data/path#field). Never a literal
	// value; one source per NAME.
	Env map[string]string `mapstructure:"env" yaml:"env"`
	// HeadersEnv, HeadersFile and HeadersVault (url) map a request header
	// to the variable, file or Vault reference holding its value; one
	// source per header.
	HeadersEnv   map[string]string `mapstructure:"headers_env" yaml:"headers_env"`
	HeadersFile  map[string]string `mapstructure:"headers_file" yaml:"headers_file"`
	HeadersVault map[string]string `mapstructure:"headers_vault" yaml:"headers_vault"`
	// Sandbox runs Command in the exec sandbox; unset means true. False
	// is a widening.
	Sandbox *bool `mapstructure:"sandbox" yaml:"sandbox"`
	// AcceptFlagged names the upstream's tools (its own names) whose
	// definition the output filter flags (injection markers, invisible
	// characters, secrets, over-long) and that are offered all the same,
	// with the filtered title and description: a widening. Without it
	// such a tool is withheld.
	AcceptFlagged []string `mapstructure:"accept_flagged" yaml:"accept_flagged"`
	// ConnectTimeout bounds starting, initializing and listing the
	// upstream's tools at start; 0 means DefaultUpstreamConnectTimeout.
	ConnectTimeout time.Duration `mapstructure:"connect_timeout" yaml:"connect_timeout"`
	// Network (command) is the sandboxed upstream's egress allowlist;
	// empty means none.
	Network Network `mapstructure:"network" yaml:"network"`
	// Mounts (command, sandboxed) are host directories bound read-only
	// at the same path in the upstream's sandbox: its installed package
	// (node_modules, a virtualenv), which the sandbox does not show
	// otherwise. Never the server's home or a directory holding it, nor
	// the sandbox's own paths (checked at start: sandbox.CheckMount).
	Mounts []string `mapstructure:"mounts" yaml:"mounts"`
	// MaxMessageBytes caps one message of an upstream; 0 means 4 MiB. A
	// command upstream's longer line kills its process, which is
	// restarted; a url upstream's longer response body or event is cut
	// unread (over SSE, the stream with it: it is connected again).
	MaxMessageBytes int `mapstructure:"max_message_bytes" yaml:"max_message_bytes"`
	// Transport (url) is "streamable_http" (the default) or "sse".
	Transport string `mapstructure:"transport" yaml:"transport"`
}

// The values of upstreams[].transport.
const (
	TransportStreamableHTTP = "streamable_http"
	TransportSSE            = "sse"
)

// The values of upstream_pins.
const (
	// PinsBlock refuses a tool whose definition differs from its pin.
	PinsBlock = "block"
	// PinsWarn runs it, logged and audited: a widening.
	PinsWarn = "warn"
	// PinsTrustOnFirstUse pins the first listing in the state directory
	// and then refuses any change, as PinsBlock does.
	PinsTrustOnFirstUse = "trust_on_first_use"
)

// PinsFile is where the pins file of the config file at file is: beside
// it, or in the working directory without one.
func PinsFile(file string) string {
	if file == "" {
		return PinsFileName
	}
	return filepath.Join(filepath.Dir(file), PinsFileName)
}

// PinsFileName is the pins file's name (toolwarden pin).
const PinsFileName = "toolwarden.pins.json"

// PinsMode is the effective upstream_pins of c: the configured value, or
// block when its pins file exists, else trust_on_first_use.
func (c Config) PinsMode() string {
	if c.UpstreamPins != "" {
		return c.UpstreamPins
	}
	if _, err := os.Stat(PinsFile(c.File)); err == nil {
		return PinsBlock
	}
	return PinsTrustOnFirstUse
}

// DefaultUpstreamConnectTimeout is how long an upstream may take to start
// and list its tools when its connect_timeout is unset.
const DefaultUpstreamConnectTimeout = 30 * time.Second

// UpstreamSep separates an upstream's name from its tool's name.
const UpstreamSep = "__"

// Sandboxed reports whether u asks to run in the sandbox (the default).
func (u Upstream) Sandboxed() bool { return u.Sandbox == nil || *u.Sandbox }

// Timeout is u's connect timeout, defaulted.
func (u Upstream) Timeout() time.Duration {
	if u.ConnectTimeout > 0 {
		return u.ConnectTimeout
	}
	return DefaultUpstreamConnectTimeout
}

// UpstreamSecret is one value an upstream receives, a variable of its
// process or a request header (Name), and where it is read from.
type UpstreamSecret struct {
	Name string
	Ref  SecretRef
}

// EnvRefs returns the variables u's process receives, sorted, each with
// its source; key (upstreams[0]) prefixes the config keys errors name.
func (u Upstream) EnvRefs(key string) []UpstreamSecret {
	byName := map[string]*UpstreamSecret{}
	for k, v := range u.Env {
		m := envKey.FindStringSubmatch(strings.ToLower(k))
		if m == nil {
			continue
		}
		s := byName[m[1]]
		if s == nil {
			s = &UpstreamSecret{Name: strings.ToUpper(m[1]), Ref: SecretRef{Key: key + ".env." + m[1]}}
			byName[m[1]] = s
		}
		s.Ref.set(m[2], v)
	}
	return sortedSecrets(byName)
}

// HeaderRefs returns the request headers u sends, sorted, each with its
// source; key as for EnvRefs.
func (u Upstream) HeaderRefs(key string) []UpstreamSecret {
	byName := map[string]*UpstreamSecret{}
	for _, src := range []struct {
		name string
		m    map[string]string
	}{{"env", u.HeadersEnv}, {"file", u.HeadersFile}, {"vault", u.HeadersVault}} {
		for h, v := range src.m {
			s := byName[strings.ToLower(h)]
			if s == nil {
				s = &UpstreamSecret{Name: h, Ref: SecretRef{Key: key + ".headers_%s." + h}}
				byName[strings.ToLower(h)] = s
			}
			s.Ref.set(src.name, v)
		}
	}
	return sortedSecrets(byName)
}

// set gives r its source of the kind named ("env", "file" or "vault").
func (r *SecretRef) set(kind, v string) {
	switch kind {
	case "env":
		r.Env = v
	case "file":
		r.File = v
	case "vault":
		r.Vault = v
	}
}

// sortedSecrets lists byName's secrets sorted by name.
func sortedSecrets(byName map[string]*UpstreamSecret) []UpstreamSecret {
	out := make([]UpstreamSecret, 0, len(byName))
	for _, s := range byName {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// source says where s is read from, for the widenings: never a value.
func (s UpstreamSecret) source() string {
	switch {
	case s.Ref.File != "":
		return "the file " + s.Ref.File
	case s.Ref.Vault != "":
		return "Vault " + s.Ref.Vault
	}
	return "the variable " + s.Ref.Env
}

// upstreamsUseVault reports whether an upstream reads a secret from Vault.
func (c Config) upstreamsUseVault() bool {
	for i, u := range c.Upstreams {
		key := fmt.Sprintf("upstreams[%d]", i)
		for _, s := range append(u.EnvRefs(key), u.HeaderRefs(key)...) {
			if s.Ref.Vault != "" {
				return true
			}
		}
	}
	return false
}

var (
	upstreamName = lazyregexp.New(`^[a-z0-9_]{1,24}$`)
	envKey       = lazyregexp.New(`^([a-z_][a-z0-9_]{0,127})_(env|file|vault)$`)
	upstreamTool = lazyregexp.New(`^[A-Za-z0-9_.-]{1,128}$`)
	headerName   = lazyregexp.New("^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$")
)

func validatePins(mode string, add func(string, string, ...any)) {
	if !slices.Contains([]string{"", PinsBlock, PinsWarn, PinsTrustOnFirstUse}, mode) {
		add("upstream_pins", "%q is not one of block, warn, trust_on_first_use (or unset: block with a pins file, else trust_on_first_use)", mode)
	}
}

func validateUpstreams(ups []Upstream, add func(string, string, ...any)) {
	seen := map[string]bool{}
	for i, u := range ups {
		key := fmt.Sprintf("upstreams[%d]", i)
		switch {
		case !upstreamName.MatchString(u.Name) || strings.Contains(u.Name, UpstreamSep) || strings.HasSuffix(u.Name, "_"):
			add(key+".name", "%q must be [a-z0-9_]{1,24} without %q and not ending in _ (its tools are named <name>__<tool>)", u.Name, UpstreamSep)
		case seen[u.Name]:
			add(key+".name", "%q is also the name of another upstream", u.Name)
		}
		seen[u.Name] = true
		u.validate(key, add)
	}
}

func (u Upstream) validate(key string, add func(string, string, ...any)) {
	if (len(u.Command) == 0) == (u.URL == "") {
		add(key, "set exactly one of command (a local server over stdio) and url (streamable HTTP)")
	}
	if len(u.Command) > 0 && strings.TrimSpace(u.Command[0]) == "" {
		add(key+".command[0]", "the program must not be empty")
	}
	if u.URL != "" {
		checkURL(add, key+".url", u.URL)
		if len(u.Env) > 0 {
			add(key+".env", "applies to command upstreams only; send credentials with headers_env, headers_file or headers_vault")
		}
		if u.Sandbox != nil && *u.Sandbox {
			add(key+".sandbox", "applies to command upstreams only (a url upstream runs elsewhere)")
		}
	}
	u.validateProcess(key, add)
	u.validateSecrets(key, add)
	for j, name := range u.AcceptFlagged {
		if !upstreamTool.MatchString(name) {
			add(fmt.Sprintf("%s.accept_flagged[%d]", key, j), "%q is not an upstream tool name (its own name, without %q)", name, u.Name+UpstreamSep)
		}
	}
	if u.ConnectTimeout != 0 {
		durationIn(add, key+".connect_timeout", u.ConnectTimeout, 10*time.Minute)
	}
	switch {
	case u.URL != "" && u.Network.Enabled():
		add(key+".network", "applies to command upstreams only (a url upstream runs elsewhere)")
	case len(u.Command) > 0 && !u.Sandboxed() && u.Network.Enabled():
		add(key+".network", "applies to sandboxed upstreams only: with sandbox: false the program has this host's whole network")
	}
	u.Network.validate(key+".network", add)
}

// validateSecrets checks u's env entries and headers: each NAME_env,
// NAME_file or NAME_vault (one per NAME), each header from one of
// headers_env, headers_file and headers_vault, files private and
// absolute, Vault references well formed, never a literal value.
func (u Upstream) validateSecrets(key string, add func(string, string, ...any)) {
	if len(u.Command) > 0 {
		for _, h := range []struct {
			name string
			m    map[string]string
		}{{"headers_env", u.HeadersEnv}, {"headers_file", u.HeadersFile}, {"headers_vault", u.HeadersVault}} {
			if len(h.m) > 0 {
				add(key+"."+h.name, "applies to url upstreams only; pass credentials with env")
			}
		}
	}
	for k, v := range u.Env {
		m := envKey.FindStringSubmatch(strings.ToLower(k))
		switch {
		case m == nil:
			add(key+".env."+k, "keys are NAME_env, NAME_file or NAME_vault: the value names a variable of toolwarden's environment, a secret file or a Vault secret, never a literal value")
		case m[2] == "env" && !envVarName.MatchString(v):
			add(key+".env."+k, "%q is not an environment variable name (the value is never given literally)", v)
		}
	}
	for _, s := range u.EnvRefs(key) {
		base := strings.ToLower(s.Name)
		if countSet(s.Ref.Env, s.Ref.File, s.Ref.Vault) > 1 {
			add(s.Ref.Key, "set only one of %s_env, %s_file and %s_vault", base, base, base)
			continue
		}
		CheckSecretRef(add, s.Ref)
	}
	for _, s := range u.HeaderRefs(key) {
		if !headerName.MatchString(s.Name) {
			add(fmt.Sprintf(s.Ref.Key, "env"), "%q is not an HTTP header name", s.Name)
			continue
		}
		if countSet(s.Ref.Env, s.Ref.File, s.Ref.Vault) > 1 {
			src := "vault"
			if s.Ref.Vault == "" {
				src = "file"
			}
			add(fmt.Sprintf(s.Ref.Key, src), "set only one of headers_env, headers_file and headers_vault for a header")
			continue
		}
		if s.Ref.Env != "" && !envVarName.MatchString(s.Ref.Env) {
			add(fmt.Sprintf(s.Ref.Key, "env"), "%q is not an environment variable name (the value is never given literally)", s.Ref.Env)
		}
		CheckSecretRef(add, s.Ref)
	}
}

// validateProcess checks the keys of a command upstream's process.
func (u Upstream) validateProcess(key string, add func(string, string, ...any)) {
	if len(u.Mounts) > 0 && (len(u.Command) == 0 || !u.Sandboxed()) {
		add(key+".mounts", "applies to sandboxed command upstreams only (unsandboxed, the program sees every file toolwarden does)")
	}
	for j, m := range u.Mounts {
		if !filepath.IsAbs(m) || filepath.Clean(m) != m || m == "/" {
			add(fmt.Sprintf("%s.mounts[%d]", key, j), "%q must be an absolute, clean path of a directory other than / (it is mounted read-only at the same path)", m)
		}
	}
	if u.MaxMessageBytes < 0 || u.MaxMessageBytes > 1<<30 {
		add(key+".max_message_bytes", "%d is outside 0..1073741824 (0 means 4 MiB)", u.MaxMessageBytes)
	}
	switch {
	case u.Transport != "" && u.URL == "":
		add(key+".transport", "applies to url upstreams only")
	case !slices.Contains([]string{"", TransportStreamableHTTP, TransportSSE}, u.Transport):
		add(key+".transport", "%q is not one of streamable_http (the default) and sse", u.Transport)
	}
}

// upstreamWidenings lists every upstream: each one offers another
// server's tools, and an unsandboxed one runs a program as toolwarden.
func upstreamWidenings(l *Loaded) []string {
	var out []string
	if l.Config.UpstreamPins == PinsWarn {
		out = append(out, "upstream_pins is warn (from "+l.Origin("upstream_pins")+"): an upstream tool whose definition changed since it was pinned still runs, logged and audited")
	}
	for i, u := range l.Config.Upstreams {
		src := l.upstreamSource(i)
		for _, name := range u.AcceptFlagged {
			out = append(out, fmt.Sprintf("upstreams %q accept_flagged offers %q even if the output filter flags its definition", u.Name, name))
		}
		if u.URL != "" {
			out = append(out, fmt.Sprintf("upstreams adds %q: connects to %s (from %s)", u.Name, u.URL, src))
			continue
		}
		out = append(out, networkWidenings(fmt.Sprintf("upstreams[%d].network", i), src, u.Network)...)
		if u.Sandboxed() {
			out = append(out, fmt.Sprintf("upstreams adds %q: runs %q in the sandbox (from %s)", u.Name, u.Command, src))
			for _, m := range u.Mounts {
				out = append(out, fmt.Sprintf("upstreams %q sees the host directory %s, read-only", u.Name, m))
			}
		} else {
			out = append(out, fmt.Sprintf("upstreams adds %q: runs %q unsandboxed (sandbox: false), as this user, with the network (from %s)", u.Name, u.Command, src))
		}
		for _, e := range u.EnvRefs(fmt.Sprintf("upstreams[%d]", i)) {
			out = append(out, fmt.Sprintf("upstreams %q receives %s from %s", u.Name, e.Name, e.source()))
		}
	}
	return out
}
