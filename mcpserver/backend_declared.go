package mcpserver

import (
	"context"
	"io"
	"slices"
	"time"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/declared"
)

// openDeclaredHTTP returns the operator's declared http tools (none when
// none are declared, which is not reported as unavailable). A tool whose
// credential variable is unset is still offered, and each call says so;
// the start-up log names the variable.
func openDeclaredHTTP(_ context.Context, env backendEnv) ([]tools.Tool, io.Closer, error) {
	h := declared.HTTP{Getenv: env.Config.Sources().Getenv, Secret: env.Config.Sources().Secret}
	var out []tools.Tool
	for _, t := range declaredOf(env.Config, configs.ToolHTTP) {
		if missing := h.MissingSecrets(t); len(missing) > 0 {
			env.Log.Warn("declared tool has no credential; its calls fail until the variables are set", "tool", t.Name, "unset", missing)
		}
		out = append(out, withRunTimeout(h.Tool(t), t, declared.DefaultHTTPTimeout, "tools."+t.Name+".timeout"))
		env.Log.Info("declared tool", "tool", t.Name, "type", t.Type, "base_url", t.BaseURL, "requires_approval", t.ApprovalRequired())
	}
	return out, nil, nil
}

// openDeclaredCLI returns the operator's declared cli tools, which run only
// in a sandbox: without one they are unavailable.
func openDeclaredCLI(ctx context.Context, env backendEnv) ([]tools.Tool, io.Closer, error) {
	decl := declaredOf(env.Config, configs.ToolCLI)
	if len(decl) == 0 {
		return nil, nil, nil // nothing declared is nothing unavailable
	}
	cfg := env.Config.Exec
	runner, err := detectSandbox(ctx, env)
	if err != nil {
		return nil, nil, err
	}
	c := declared.CLI{Runner: runner, Workspace: env.Workspace, Limits: cfg.Limits}
	if c.Network, err = declaredNetworks(env); err != nil {
		return nil, nil, err
	}
	var closer io.Closer
	if slices.ContainsFunc(decl, func(t configs.DeclaredTool) bool { return t.GoCache }) {
		c.Go, closer = goToolchain(cfg, env)
	}
	out := make([]tools.Tool, 0, len(decl))
	for _, t := range decl {
		out = append(out, withRunTimeout(c.Tool(t), t, cfg.Limits.Timeout, "exec.limits.timeout"))
		env.Log.Info("declared tool", "tool", t.Name, "type", t.Type, "command", t.Command, "sandbox", runner.Name(), "requires_approval", t.ApprovalRequired())
	}
	return out, withRunner(runner, closer), nil
}

// withRunTimeout gives a declared tool its own timeout (its timeout key,
// else def under defKey), which the call deadline never cuts.
func withRunTimeout(tool tools.Tool, t configs.DeclaredTool, def time.Duration, defKey string) tools.Tool {
	d, key := t.Timeout, "tools."+t.Name+".timeout"
	if d <= 0 {
		d, key = def, defKey
	}
	tool.Meta.RunTimeout = func(map[string]any) (time.Duration, string) { return d, key }
	return tool
}

// declaredToolset makes a toolset of the operator's declared tools, which
// are not built in: they are defined only when open builds them, so the
// catalog holds none of them.
func declaredToolset(name string, open func(context.Context, backendEnv) ([]tools.Tool, io.Closer, error)) toolset {
	set := &declaredSet{}
	return toolset{name: name, set: set, open: func(ctx context.Context, env backendEnv) (io.Closer, error) {
		ts, c, err := open(ctx, env)
		set.tools = ts
		return c, err
	}}
}

// declaredSet holds the declared tools open built.
type declaredSet struct{ tools []tools.Tool }

// Tools returns the declared tools, none before open.
func (s *declaredSet) Tools() []tools.Tool { return s.tools }

func declaredOf(cfg configs.Config, typ string) []configs.DeclaredTool {
	var out []configs.DeclaredTool
	for _, t := range cfg.Tools {
		if t.Type == typ {
			out = append(out, t)
		}
	}
	return out
}
