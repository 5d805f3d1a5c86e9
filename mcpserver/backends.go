package mcpserver

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/artifacts"
	"github.com/toolwarden/toolwarden/tools/exec"
	"github.com/toolwarden/toolwarden/tools/fs"
	"github.com/toolwarden/toolwarden/tools/git"
	"github.com/toolwarden/toolwarden/tools/graph"
)

// A toolset is one domain's tools, defined from the config alone, and how
// its backend is opened and bound to them afterwards.
type toolset struct {
	name string
	// set defines the tools. Before open, its Tools are the catalog's;
	// after a successful open, they are the ones offered.
	set interface{ Tools() []tools.Tool }
	// open opens the backend and binds it to set; it returns what to close
	// when the server stops. An error means the toolset is unavailable:
	// its tools are neither listed nor callable, the server still starts,
	// and `toolwarden config check` prints the reason.
	open func(ctx context.Context, env backendEnv) (io.Closer, error)
}

// backendEnv is what a backend is opened with.
type backendEnv struct {
	Config    configs.Config
	Workspace *sandbox.Workspace
	Log       *slog.Logger
	// Sandbox receives how the detected sandbox enforces limits.
	Sandbox **SandboxReport
	// Observe watches the sandbox runs.
	Observe Observers
	// Pins compares the upstreams' listings with their pins.
	Pins *pinGate
	// Egress is the egress proxy; nil when no network block allows any.
	Egress *egressHub
}

// Unavailable names a toolset that could not be opened, and why.
type Unavailable struct {
	Toolset string `yaml:"toolset" json:"toolset"`
	Reason  string `yaml:"reason" json:"reason"`
}

// toolsets is the catalog: every toolset of cfg, in the order their tools
// are listed. Defining them opens, probes and looks up nothing, so the
// same config gives the same catalog on every machine. A built-in tool is
// added to its domain's Set.Tools; a new domain is one line here.
func toolsets(cfg configs.Config, log *slog.Logger) []toolset {
	f := fs.New(nil, cfg.FS).SkipSecretFiles(cfg.Capabilities.SecretGlobs())
	x := exec.New(cfg.Exec, cfg.Workspace)
	a := artifacts.New(cfg.Artifacts, log)
	g := graph.New(nil, cfg.Graph.MaxListResults)
	vc := git.New(nil, cfg.FS).SkipSecretFiles(cfg.Capabilities.SecretGlobs())
	return append([]toolset{
		{name: "fs", set: f, open: func(_ context.Context, env backendEnv) (io.Closer, error) { f.Bind(env.Workspace); return nil, nil }},
		{name: "git", set: vc, open: func(_ context.Context, env backendEnv) (io.Closer, error) { vc.Bind(env.Workspace); return nil, nil }},
		{name: "exec", set: x, open: func(ctx context.Context, env backendEnv) (io.Closer, error) { return openExec(ctx, env, x) }},
		{name: "artifacts", set: a, open: func(ctx context.Context, env backendEnv) (io.Closer, error) { return openArtifacts(ctx, env, a) }},
		{name: "graph", set: g, open: func(ctx context.Context, env backendEnv) (io.Closer, error) { return openGraph(ctx, env, g) }},
		declaredToolset("declared_http", openDeclaredHTTP),
		declaredToolset("declared_cli", openDeclaredCLI),
	}, append(upstreamToolsets(cfg), profileToolsets()...)...)
}

//go:generate env UPDATE_TOOLSNAPS=true go test -count=1 -run ^(TestToolSnapshots|TestToolsDoc|TestReservedNamesAreTheCatalog)$ .

// Catalog is every built-in tool of cfg, with its definition, schemas,
// annotations, guard metadata and preview, whichever backends this machine
// could open. The handlers are not bound: the catalog is for listing and
// checking the tools, never for calling them. The operator's declared tools
// are not built in and not in it.
func Catalog(cfg configs.Config) []tools.Tool {
	var all []tools.Tool
	for _, ts := range toolsets(cfg, slog.New(slog.DiscardHandler)) {
		all = append(all, ts.set.Tools()...)
	}
	return all
}

// openBackends opens every toolset's backend and returns the tools of the
// ones that opened; the ones that fail are reported, not fatal.
//
// A startupError is fatal instead: the configuration asks for what this
// machine's sandbox cannot do, and the server must not start as if it did.
func openBackends(ctx context.Context, sets []toolset, env backendEnv) ([]tools.Tool, []io.Closer, []Unavailable, error) {
	var (
		all     []tools.Tool
		closers []io.Closer
		missing []Unavailable
	)
	for _, ts := range sets {
		c, err := ts.open(ctx, env)
		var fatal *startupError
		if errors.As(err, &fatal) {
			for _, c := range closers {
				c.Close()
			}
			return nil, nil, nil, err
		}
		if err != nil {
			env.Log.Warn("toolset unavailable", "toolset", ts.name, "reason", err.Error())
			missing = append(missing, Unavailable{Toolset: ts.name, Reason: err.Error()})
			continue
		}
		if c != nil {
			closers = append(closers, c)
		}
		all = append(all, ts.set.Tools()...)
		if w, ok := ts.set.(interface{ Withheld() []Unavailable }); ok {
			missing = append(missing, w.Withheld()...)
		}
	}
	return all, closers, missing, nil
}

// offerHooks maps the name of each tool whose toolset wants to know when
// a client is offered it (an Offered method, as the exec tools' Set has)
// to that method.
func offerHooks(sets []toolset) map[string]func() {
	out := map[string]func(){}
	for _, ts := range sets {
		o, ok := ts.set.(interface{ Offered() })
		if !ok {
			continue
		}
		for _, t := range ts.set.Tools() {
			out[t.Tool.Name] = o.Offered
		}
	}
	return out
}
