package configs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/toolwarden/toolwarden/internal/lazyregexp"
)

// EnvPrefix prefixes every environment variable toolwarden reads.
const EnvPrefix = "TOOLWARDEN"

// Options says where configuration comes from besides the embedded default.
type Options struct {
	// File is an explicit config file (--config). Empty means search
	// ./toolwarden.yaml, then $XDG_CONFIG_HOME/toolwarden/config.yaml.
	File string
	// Flags and FlagKeys bind command-line flags to config keys, e.g.
	// "http" → "http.addr". Only flags the user set override.
	Flags    *pflag.FlagSet
	FlagKeys map[string]string
	// Allow and Deny are tool-name globs from --allow and --deny; they are
	// added to the configured lists.
	Allow, Deny []string
	// Approval holds --approval TOOL_GLOB=MODE rules, added to
	// approval.modes (the more restrictive mode wins on the same glob).
	Approval []string
	// ApprovalPage (--approval-page) adds the approval page to
	// approval.channel, after the configured channels.
	ApprovalPage bool
	// CheckTool validates each declared tool (declared.Check). configs
	// knows the YAML of a declared tool but not its meaning, which is
	// package tools/declared's; Load refuses declared tools without it.
	CheckTool ToolChecker
}

// ToolChecker validates one declared tool and may complete it (resolve its
// program, normalise its method). Keys passed to add are relative to the
// tool ("command[0]", "params[1].pattern"); Load turns them into
// "file:line: tools[i].key: reason".
type ToolChecker func(t *DeclaredTool, add func(key, format string, args ...any))

// Loaded is a validated configuration and where it came from.
type Loaded struct {
	Config Config
	// File is the config file that was read, or "" for none.
	File string
	// Widenings lists, in words, every place the file, the environment or
	// flags widened the built-in defaults. They are logged at start.
	Widenings []string
	// Warnings lists what is likely a mistake but does not stop the
	// server: TOOLWARDEN_* variables that set nothing. They are logged at
	// start and printed by config check.
	Warnings []string
	origin   *origins
	declared []toolSource // where each of Config.Tools was read
	// upstreamSrc says where each of Config.Upstreams was read.
	upstreamSrc []string
}

// Origin names the source of a key's value: a file, an environment variable,
// a flag, or "default".
func (l *Loaded) Origin(key string) string { return l.origin.of(key) }

// Load reads the embedded default, then the config file, the environment and
// flags, decodes strictly and validates. Errors name the source, the key and
// the reason.
func Load(opts Options) (*Loaded, error) {
	file, err := findFile(opts.File)
	if err != nil {
		return nil, err
	}
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(defaultYAML)); err != nil {
		return nil, fmt.Errorf("embedded default config: %w", err)
	}
	org := &origins{file: file, fileKeys: map[string]bool{}, flagKeys: map[string]string{}}
	if file != "" {
		if err := mergeFile(v, file, org); err != nil {
			return nil, err
		}
	}
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	if err := bindFlags(v, opts, org); err != nil {
		return nil, err
	}
	var cfg Config
	if err := v.Unmarshal(&cfg, strict); err != nil {
		return nil, org.decodeError(err)
	}
	org.flagGrant = flagList(opts.Flags, "grant")
	cfg.Capabilities.Grant = append(cfg.Capabilities.Grant, org.flagGrant...)
	cfg.Capabilities.Deny = append(cfg.Capabilities.Deny, flagList(opts.Flags, "revoke")...)
	cfg.Policy.Allow = append(cfg.Policy.Allow, opts.Allow...)
	cfg.Policy.Deny = append(cfg.Policy.Deny, opts.Deny...)
	org.flagAllow = opts.Allow
	org.flagApproval = slices.Concat(opts.Approval, approvalFlags(opts.Flags))
	if err := cfg.addApprovalFlags(org.flagApproval); err != nil {
		return nil, err
	}
	if opts.ApprovalPage && !cfg.Approval.HasChannel("page") {
		cfg.Approval.Channel = append(cfg.Approval.Channel, "page")
		org.flagKeys["approval.channel"] = "--approval-page"
	}
	cfg.File = file
	if cfg.Audit.ReplicaID == "" {
		// One name per replica: the audit lines take the cluster's.
		cfg.Audit.ReplicaID = cfg.Cluster.ReplicaID
	}
	cfg.bindSecrets()
	l := &Loaded{Config: cfg, File: file, origin: org}
	l.Config.Exec.LimitsSet = limitsSet(l)
	if err := l.validate(); err != nil {
		return nil, err
	}
	if err := l.loadDeclared(opts.CheckTool); err != nil {
		return nil, err
	}
	if err := l.loadUpstreams(); err != nil {
		return nil, err
	}
	l.Widenings = widenings(l)
	l.Warnings = unknownEnv(os.Environ(), v.AllKeys(), &l.Config)
	return l, nil
}

func strict(c *mapstructure.DecoderConfig) {
	c.ErrorUnused = true
	c.WeaklyTypedInput = true
}

func findFile(explicit string) (string, error) {
	if explicit == "" {
		explicit = os.Getenv(EnvPrefix + "_CONFIG")
	}
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", fmt.Errorf("config file %s: %w", explicit, err)
		}
		return explicit, nil
	}
	candidates := []string{"toolwarden.yaml"}
	if dir, err := os.UserConfigDir(); err == nil {
		candidates = append(candidates, filepath.Join(dir, "toolwarden", "config.yaml"))
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c, nil
		}
	}
	return "", nil
}

func mergeFile(v *viper.Viper, file string, org *origins) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("config file %s: %w", file, err)
	}
	keys, err := checkFile(file, data)
	if err != nil {
		return err
	}
	for _, k := range keys {
		org.fileKeys[k] = true
	}
	if err := v.MergeConfig(bytes.NewReader(data)); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

func bindFlags(v *viper.Viper, opts Options, org *origins) error {
	if opts.Flags == nil {
		return nil
	}
	for name, key := range opts.FlagKeys {
		f := opts.Flags.Lookup(name)
		if f == nil {
			return errors.New("configs: unknown flag " + name)
		}
		if f.Changed {
			org.flagKeys[key] = "--" + name
			if err := v.BindPFlag(key, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// origins remembers which source set each key, for error messages.
type origins struct {
	// flagGrant holds the capabilities --grant added.
	flagGrant []string

	file     string
	fileKeys map[string]bool
	flagKeys map[string]string
	// flagAllow holds the globs --allow added.
	flagAllow []string
	// flagApproval holds the --approval rules.
	flagApproval []string
}

func (o *origins) of(key string) string {
	if f, ok := o.flagKeys[key]; ok {
		return "flag " + f
	}
	if env := EnvName(key); os.Getenv(env) != "" {
		return "env " + env
	}
	if o.fileKeys[key] {
		return o.file
	}
	// A key inside a list (upstreams[0].sandbox) comes from where the
	// list does.
	if i := strings.IndexByte(key, '['); i > 0 && o.fileKeys[key[:i]] {
		return o.file
	}
	return "default"
}

// decodeLine matches mapstructure's "'key' reason" error lines.
var decodeLine = lazyregexp.New(`^'([a-z0-9_.]+)' (.*)$`)

// decodeError rewrites a decoding error as "source: key: reason" lines.
func (o *origins) decodeError(err error) error {
	var lines []string
	for _, line := range strings.Split(err.Error(), "\n") {
		if m := decodeLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			lines = append(lines, fmt.Sprintf("%s: %s: %s", o.of(m[1]), m[1], m[2]))
		}
	}
	if len(lines) == 0 {
		return fmt.Errorf("config: %w", err)
	}
	return errors.New(strings.Join(lines, "\n"))
}

// EnvName returns the environment variable that sets key.
func EnvName(key string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}
