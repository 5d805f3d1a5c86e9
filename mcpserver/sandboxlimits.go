package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/sandbox"
)

// SandboxReport is how the sandbox enforces limits in the mode the server
// runs in, and which weaker limits the operator accepted; `toolwarden
// config check` prints it.
type SandboxReport struct {
	sandbox.Enforcement `yaml:",inline"`
	Accepted            []string `yaml:"accepted_weaker_limits,omitempty"`
	// WarmPool says how many sandboxes are booted ahead (exec.warm_pool).
	WarmPool string `yaml:"warm_pool,omitempty"`
}

// startupError stops the server from starting at all.
type startupError struct{ msg string }

func (e *startupError) Error() string { return e.msg }

// detectSandbox finds the sandbox backend of the exec and declared cli
// tools and checks that it enforces the limits the operator set: one set
// that the mode enforces less strictly than configured is a start-up
// error naming the key and the mode, unless exec.accept_weaker_limits
// lists it; an accepted one is logged.
func detectSandbox(ctx context.Context, env backendEnv) (sandbox.Runner, error) {
	cfg := env.Config.Exec
	opt := sandbox.DetectOptions{Backend: cfg.Backend, RunscPath: cfg.RunscPath, BwrapPath: cfg.BwrapPath, StateDir: ExecStateDir(cfg)}
	var runner sandbox.Runner
	var err error
	if dir := probeCacheDir(); probeOf(ctx) != probeNow && dir != "" {
		var cached bool
		runner, cached, err = sandbox.DetectCached(ctx, opt, dir)
		env.Log.Debug("sandbox backend", "from_probe_cache", cached, "cache", dir)
	} else {
		runner, err = sandbox.Detect(ctx, opt)
	}
	if err != nil {
		return nil, err
	}
	report, err := checkEnforcement(cfg, sandbox.EnforcementOf(runner), env.Log)
	if env.Sandbox != nil {
		*env.Sandbox = report
	}
	if err != nil {
		if c, ok := runner.(interface{ Close() error }); ok {
			c.Close()
		}
		return nil, err
	}
	return env.Observe.runner(runner), nil
}

// checkEnforcement compares what the operator set and accepted with what
// the sandbox enforces, e.
func checkEnforcement(cfg configs.Exec, e sandbox.Enforcement, log *slog.Logger) (*SandboxReport, error) {
	report := &SandboxReport{Enforcement: e}
	var refused []string
	for _, name := range e.Weaker {
		switch {
		case slices.Contains(cfg.AcceptWeakerLimits, name):
			report.Accepted = append(report.Accepted, name)
			log.Warn("widening: a limit is enforced less strictly than configured (exec.accept_weaker_limits)",
				"limit", name, "key", configs.WeakerLimits[name], "backend", e.Backend, "mode", e.Mode, "enforced", e.Limits[name])
		case slices.Contains(cfg.LimitsSet, name):
			refused = append(refused, fmt.Sprintf("%s is set, but the %s sandbox in %s mode enforces %s only as: %s",
				configs.WeakerLimits[name], e.Backend, e.Mode, name, e.Limits[name]))
		}
	}
	if len(refused) > 0 {
		return report, &startupError{msg: strings.Join(refused, "; ") +
			" (run as root for cgroup limits, or list the limit in exec.accept_weaker_limits to accept it)"}
	}
	return report, nil
}
