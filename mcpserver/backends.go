package mcpserver

import (
	"context"
	"io"
	"log/slog"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/fs"
)

// A backend contributes one toolset. open returns the toolset's tools and
// what to close when the server stops; an error means the toolset is
// unavailable: its tools are not registered, the server still starts, and
// `toolwarden config check` prints the reason.
type backend struct {
	name string
	open func(ctx context.Context, env backendEnv) ([]tools.Tool, io.Closer, error)
}

// backendEnv is what a backend is opened with.
type backendEnv struct {
	Config    configs.Config
	Workspace *sandbox.Workspace
	Log       *slog.Logger
}

// Unavailable names a toolset that could not be opened, and why.
type Unavailable struct {
	Toolset string `yaml:"toolset" json:"toolset"`
	Reason  string `yaml:"reason" json:"reason"`
}

// backends lists every toolset, in the order their tools are listed.
var backends = []backend{
	{name: "fs", open: openFS},
	{name: "exec", open: openExec},
	{name: "artifacts", open: openArtifacts},
	{name: "graph", open: openGraph},
	{name: "declared_http", open: openDeclaredHTTP},
	{name: "declared_cli", open: openDeclaredCLI},
}

func openFS(_ context.Context, env backendEnv) ([]tools.Tool, io.Closer, error) {
	return fs.New(env.Workspace, env.Config.FS).Tools(), nil, nil
}

// openBackends opens every backend; the ones that fail are reported, not
// fatal.
func openBackends(ctx context.Context, env backendEnv) ([]tools.Tool, []io.Closer, []Unavailable) {
	var (
		all     []tools.Tool
		closers []io.Closer
		missing []Unavailable
	)
	for _, b := range backends {
		ts, c, err := b.open(ctx, env)
		if err != nil {
			env.Log.Warn("toolset unavailable", "toolset", b.name, "reason", err.Error())
			missing = append(missing, Unavailable{Toolset: b.name, Reason: err.Error()})
			continue
		}
		if c != nil {
			closers = append(closers, c)
		}
		all = append(all, ts...)
	}
	return all, closers, missing
}
