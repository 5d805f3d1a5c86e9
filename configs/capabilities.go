package configs

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/spf13/pflag"
	"github.com/toolwarden/toolwarden/internal/capability"
	"github.com/toolwarden/toolwarden/internal/lazyregexp"
)

// Capabilities are what the tools may touch, as resource:verb:scope
// (fs:read:src/**, net:connect:api.example.com:443, proc:exec:python,
// env:read:HOME, graph:write:*, s3:read:tasks/*). A call whose needs are
// not covered by Grant, or are matched by Deny, is denied; deny wins.
type Capabilities struct {
	Grant []string `mapstructure:"grant" yaml:"grant"`
	Deny  []string `mapstructure:"deny" yaml:"deny"`
	// SecretFiles are path globs of files that hold credentials; no tool
	// may read or write them unless AllowSecretFiles (see secretfiles.go).
	SecretFiles      []string `mapstructure:"secret_files" yaml:"secret_files"`
	AllowSecretFiles bool     `mapstructure:"allow_secret_files" yaml:"allow_secret_files"`
}

// ToolLimits bound the calls of the tools matching one limits.tools glob;
// zero leaves a bound off. Tools matching one glob share its counters.
type ToolLimits struct {
	MaxCalls      int     `mapstructure:"max_calls" yaml:"max_calls"`
	RatePerMinute float64 `mapstructure:"rate_per_minute" yaml:"rate_per_minute"`
	Burst         int     `mapstructure:"burst" yaml:"burst"`
	MaxBytesIn    int64   `mapstructure:"max_bytes_in" yaml:"max_bytes_in"`
	MaxBytesOut   int64   `mapstructure:"max_bytes_out" yaml:"max_bytes_out"`
	// Cost is what one call spends of limits.budget.
	Cost int64 `mapstructure:"cost" yaml:"cost"`
	// Timeout bounds each call when shorter than limits.call_timeout.
	Timeout time.Duration `mapstructure:"timeout" yaml:"timeout"`
}

func (c Capabilities) validate(add func(string, string, ...any)) {
	for key, list := range map[string][]string{"capabilities.grant": c.Grant, "capabilities.deny": c.Deny} {
		for _, s := range list {
			if _, err := capability.Parse(s); err != nil {
				add(key, "%v", err)
			}
		}
	}
	c.validateSecretFiles(add)
}

func (l Limits) validatePolicy(add func(string, string, ...any)) {
	notNegativeRate(add, "limits.rate_per_minute", l.RatePerMinute)
	notNegative(add, "limits.burst", int64(l.Burst))
	notNegative(add, "limits.max_bytes_in_per_session", l.MaxBytesInPerSession)
	notNegative(add, "limits.budget", l.Budget)
	for glob, t := range l.Tools {
		key := "limits.tools." + glob
		if !doublestar.ValidatePattern(glob) {
			add(key, "%q is not a valid tool-name glob", glob)
		}
		notNegative(add, key+".max_calls", int64(t.MaxCalls))
		notNegativeRate(add, key+".rate_per_minute", t.RatePerMinute)
		notNegative(add, key+".burst", int64(t.Burst))
		notNegative(add, key+".max_bytes_in", t.MaxBytesIn)
		notNegative(add, key+".max_bytes_out", t.MaxBytesOut)
		notNegative(add, key+".cost", t.Cost)
		if t.Timeout != 0 {
			durationIn(add, key+".timeout", t.Timeout, time.Hour)
		}
	}
}

func notNegativeRate(add func(string, string, ...any), key string, v float64) {
	if v < 0 || math.IsNaN(v) {
		add(key, "must not be negative (0 turns it off), got %g", v)
	}
}

func notNegative(add func(string, string, ...any), key string, v int64) {
	if v < 0 {
		add(key, "must not be negative (0 turns it off), got %d", v)
	}
}

// policyWidenings lists the capability grants beyond the built-in ones
// and the extra HTTP identities.
func policyWidenings(l *Loaded, def Capabilities) []string {
	var out []string
	for _, g := range l.Config.Capabilities.Grant {
		if slices.Contains(def.Grant, g) {
			continue
		}
		src := l.Origin("capabilities.grant")
		if slices.Contains(l.origin.flagGrant, g) {
			src = "flag --grant"
		}
		out = append(out, fmt.Sprintf("capabilities.grant adds %q (from %s)", g, src))
	}
	for _, id := range l.Config.HTTP.Identities {
		out = append(out, fmt.Sprintf("http.identities adds the bearer token of %q (from %s)", id.Name, l.Origin("http.identities")))
	}
	return out
}

var identityName = lazyregexp.New(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

func (h HTTP) validateIdentities(add func(string, string, ...any)) {
	seen := map[string]bool{}
	for i, id := range h.Identities {
		key := fmt.Sprintf("http.identities[%d]", i)
		if !identityName.MatchString(id.Name) || seen[id.Name] || strings.HasPrefix(id.Name, "token-") || id.Name == "local" {
			add(key+".name", "%q must be a unique lower-case name (not local, not token-*)", id.Name)
		}
		seen[id.Name] = true
		if n := countSet(id.TokenEnv, id.TokenFile, id.TokenVault); n != 1 {
			add(key, "set exactly one of token_env, token_file and token_vault")
		} else if id.TokenEnv != "" && !envVarName.MatchString(id.TokenEnv) {
			add(key+".token_env", "is not an environment variable name; name the variable that holds the token, never the token itself")
		}
	}
}

// flagList returns the values of a repeatable string flag (--grant,
// --revoke), added to the configured lists; nil when the command has no
// such flag.
func flagList(flags *pflag.FlagSet, name string) []string {
	if flags == nil || flags.Lookup(name) == nil {
		return nil
	}
	v, _ := flags.GetStringArray(name)
	return v
}
