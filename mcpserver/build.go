package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/guard/outfilter"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/declared"
	"github.com/toolwarden/toolwarden/tools/upstream"
)

// Built is a server assembled from a configuration, with the workspace it
// holds open.
type Built struct {
	*Server
	Workspace *sandbox.Workspace
	Tools     []tools.Tool
	// Unavailable lists the toolsets that could not be opened.
	Unavailable []Unavailable
	// Sandbox says how the sandbox of the exec and declared cli tools
	// enforces limits; nil when neither opened one.
	Sandbox *SandboxReport
	closers []io.Closer
}

// Close releases the backends and the workspace.
func (b *Built) Close() error {
	var errs []error
	for i := len(b.closers) - 1; i >= 0; i-- {
		errs = append(errs, b.closers[i].Close())
	}
	return errors.Join(append(errs, b.Workspace.Close())...)
}

// Build assembles the tools, the guard and the server from cfg; decisions
// are recorded in audit. A toolset whose backend cannot be opened is left
// out and listed in Unavailable.
func Build(ctx context.Context, cfg configs.Config, audit guard.Auditor, version string, log *slog.Logger) (*Built, error) {
	return build(ctx, cfg, audit, version, log, Observers{})
}

// build is Build with the observers the server and its sandbox report to.
func build(ctx context.Context, cfg configs.Config, audit guard.Auditor, version string, log *slog.Logger, obs Observers) (*Built, error) {
	ws, err := sandbox.Open(cfg.Workspace)
	if err != nil {
		return nil, err
	}
	b := &Built{Workspace: ws}
	pins, err := newPinGate(cfg, log)
	if err != nil {
		ws.Close()
		return nil, err
	}
	eg, err := newEgressHub(cfg, audit, log, obs)
	if err != nil {
		ws.Close()
		return nil, err
	}
	sets := toolsets(cfg, log)
	b.Tools, b.closers, b.Unavailable, err = openBackends(ctx, sets, backendEnv{Config: cfg, Workspace: ws, Log: log, Sandbox: &b.Sandbox, Observe: obs, Pins: pins, Egress: eg})
	if err != nil {
		ws.Close()
		return nil, err
	}
	cl, err := openCluster(ctx, cfg.Cluster, log)
	if err != nil {
		b.Close()
		return nil, err
	}
	items, err := listUpstreamItems(ctx, cfg, b.Tools, b.closers, pins, log)
	if err != nil {
		b.Close()
		return nil, err
	}
	b.Unavailable = append(b.Unavailable, items.withheld...)
	g, err := newGuard(cfg, append(slices.Clone(b.Tools), items.guarded()...), audit, cl.usage(cfg))
	if err != nil {
		b.Close()
		return nil, err
	}
	g.SetObserver(obs.Guard)
	eg.bind(g)
	b.Server = New(g, b.Tools, version, log)
	b.Server.egress = eg
	b.Server.obs = obs
	b.Server.pins = pins
	pins.bind(g, b.Server.toolsChanged, b.Server.setUpstreamTools)
	b.Server.offers = offerHooks(sets)
	if cl != nil {
		b.closers = append(b.closers, cl.client)
		b.Server.join(cl)
	}
	b.Server.SetLateCalls(cfg.Limits.TimeoutGrace, cfg.Limits.MaxAbandoned)
	if err := b.Server.setupApproval(cfg.Approval, log); err != nil {
		b.Close()
		return nil, err
	}
	b.Server.tasks.cfg = cfg.Tasks
	b.Server.addResources(b.closers)
	b.Server.addUpstreamItems(items)
	return b, nil
}

// NewGuard builds the guard for toolset under cfg, counting usage in
// this process.
func NewGuard(cfg configs.Config, toolset []tools.Tool, audit guard.Auditor) (*guard.Guard, error) {
	return newGuard(cfg, toolset, audit, nil)
}

// newGuard is NewGuard counting usage in usage (nil: this process).
func newGuard(cfg configs.Config, toolset []tools.Tool, audit guard.Auditor, usage guard.UsageStore) (*guard.Guard, error) {
	policy, err := guard.NewPolicy(cfg.Policy.Allow, cfg.Policy.Deny)
	if err != nil {
		return nil, err
	}
	deny := append(append([]string(nil), cfg.Capabilities.Deny...), protectedWrites(cfg)...)
	grant := append(append([]string(nil), cfg.Capabilities.Grant...), upstreamGrants(toolset)...)
	if policy, err = policy.WithCapabilities(grant, deny); err != nil {
		return nil, err
	}
	if policy, err = policy.WithSecretFiles(cfg.Capabilities.SecretGlobs()); err != nil {
		return nil, err
	}
	schemas := map[string]json.RawMessage{}
	paths := map[string][]string{}
	var names, supplied []string
	for _, t := range toolset {
		schemas[t.Tool.Name] = t.Tool.RawInputSchema
		paths[t.Tool.Name] = t.Meta.PathArgs
		names = append(names, t.Tool.Name)
		if operatorSchema(t) {
			supplied = append(supplied, t.Tool.Name)
		}
	}
	v, err := guard.NewValidator(schemas, paths)
	if err != nil {
		return nil, err
	}
	// The built-in tools' schemas are fixed in the binary (every one is
	// compiled by TestCatalogSchemasCompile): each is compiled at its
	// tool's first call. The operator's are compiled now, so that a
	// schema that does not compile stops the build, and config check.
	if err := v.Compile(supplied...); err != nil {
		return nil, err
	}
	v.WithControlArgs(cfg.Policy.ClientControlArgs)
	layers, err := IdentityLayers(cfg.Identities)
	if err != nil {
		return nil, err
	}
	filter, err := outfilter.New(outfilter.Options{Redact: !cfg.OutputFilter.DisableRedaction,
		StripInvisible: !cfg.OutputFilter.KeepInvisible, Markers: cfg.OutputFilter.InjectionMarkers, ToolNames: names})
	if err != nil {
		return nil, err
	}
	args, err := argScan(cfg, filter, names)
	if err != nil {
		return nil, err
	}
	return guard.New(guard.Config{
		Arguments:      args,
		Policy:         policy,
		RequireTrust:   cfg.Policy.RequireTrust,
		Limits:         GuardLimits(cfg.Limits),
		MaxOutputBytes: cfg.Limits.MaxOutputBytesPerCall,
		CallTimeout:    cfg.Limits.CallTimeout,
		OutputFilter:   filter,
		ResolvePath:    linkResolver(workspaceDir(cfg.Workspace)),
		Identities:     layers,
		Usage:          usage,
		Taint:          cfg.Policy.Taint,
		PrivateTools:   cfg.Policy.PrivateTools,
	}, GuardInfo(toolset), v, audit), nil
}

// operatorSchema reports whether t's input schema comes from the
// operator's config: a declared tool's, generated from its params, or an
// upstream tool's, as the upstream lists it.
func operatorSchema(t tools.Tool) bool {
	return t.Meta.Toolset == declared.Toolset || t.Meta.Toolset == upstream.Toolset
}

// AuditPath is the configured audit file, or the default under the XDG
// state directory.
func AuditPath(cfg configs.Config) string {
	if cfg.Audit.Path != "" {
		return cfg.Audit.Path
	}
	return filepath.Join(stateDir(), "audit.jsonl")
}

// stateDir is toolwarden's directory under the XDG state directory
// (~/.local/state/toolwarden), or a per-user temporary one without a home.
func stateDir() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return filepath.Join(os.TempDir(), fmt.Sprintf("toolwarden-%d", os.Getuid()))
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "toolwarden")
}
