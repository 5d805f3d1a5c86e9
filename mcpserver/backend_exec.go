package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools/exec"
)

// openExec finds a working sandbox backend and binds it to the exec tools.
// It starts preparing the shared GOCACHE in the background when it is
// missing; go runs wait for it. A serving server finds the backend later
// (openExecLater).
func openExec(ctx context.Context, env backendEnv, set *exec.Set) (io.Closer, error) {
	cfg := env.Config.Exec
	if len(cfg.Interpreters) == 0 && len(cfg.Commands) == 0 {
		return nil, errors.New("not configured: exec.interpreters and exec.commands are both empty")
	}
	if err := withExecNetwork(env, set); err != nil {
		return nil, err
	}
	if (!cfg.OneShot || probeOf(ctx) == probeLater) && len(cfg.LimitsSet) == 0 {
		return openExecLater(ctx, env, set), nil
	}
	runner, err := detectSandbox(ctx, env)
	if err != nil {
		return nil, err
	}
	env.Log.Info("sandbox ready", "backend", runner.Name(), "workspace_writable", cfg.WorkspaceWritable)
	tc, cache := findGo(cfg)
	if probeOf(ctx) == probeNow {
		prepareGo(cache, env) // the others run nothing
	}
	set.Bind(runner, tc)
	var warm int
	if !cfg.OneShot {
		warm, err = set.KeepWarm(func(err error) { warnNoWarm(env, err) })
	}
	if err != nil {
		warnNoWarm(env, err)
	}
	if env.Sandbox != nil && *env.Sandbox != nil {
		(*env.Sandbox).WarmPool = warmPoolText(runner, cfg, warm, err, set.WarmsPython())
	}
	return withRunner(runner, closers{set, cache}), nil
}

// openExecLater binds the exec tools to a backend found at their first
// need (laterRunner): when a client is offered them (the warm pool boots
// then) or calls one. Serving waits for none of it, and a server whose
// clients are never offered the tools boots no sandbox at all. Until a
// backend is found a run waits for it; if none works, runs answer
// backend.unavailable (where a server that detects at start leaves the
// tools out). A configuration whose limits the backend may refuse
// (exec.limits set, a start-up error) detects at start instead.
func openExecLater(ctx context.Context, env backendEnv, set *exec.Set) io.Closer {
	cfg := env.Config.Exec
	tc, cache := findGo(cfg)
	detect := func(ctx context.Context) (sandbox.Runner, error) {
		quiet := env
		quiet.Sandbox = nil // the report is config check's, which detects at start
		r, err := detectSandbox(ctx, quiet)
		if err != nil {
			env.Log.Warn("no working sandbox: run_script and run_command answer backend.unavailable", "reason", err.Error())
		}
		return r, err
	}
	runner := newLaterRunner(ctx, detect, func(r sandbox.Runner) {
		env.Log.Info("sandbox ready", "backend", r.Name(), "workspace_writable", cfg.WorkspaceWritable)
		prepareGo(cache, env)
	})
	set.Bind(runner, tc)
	if _, err := set.KeepWarm(func(err error) { warnNoWarm(env, err) }); err != nil {
		warnNoWarm(env, err)
	}
	return withRunner(runner, closers{set, cache})
}

func warnNoWarm(env backendEnv, err error) {
	env.Log.Warn("no sandboxes are booted ahead; every run boots its own", "err", err)
}

// warmPoolText is `config check`'s line on exec.warm_pool; python says
// whether python scripts' sandboxes start the interpreter ahead.
func warmPoolText(r sandbox.Runner, cfg configs.Exec, got int, err error, python bool) string {
	_, warmer := sandbox.WarmerOf(r)
	switch {
	case err != nil:
		return "off: " + err.Error()
	case cfg.WarmPool == 0:
		return "off (exec.warm_pool is 0)"
	case !warmer:
		return "off: the " + r.Name() + " backend starts without a boot to skip"
	case got == 0 && cfg.OneShot:
		got = cfg.WarmPool
	}
	ahead := ""
	if python {
		ahead = " (python started in them)"
	}
	return fmt.Sprintf("%d %s sandboxes booted ahead while serving%s, each used for one run and then removed", got, r.Name(), ahead)
}

// withRunner closes the sandbox backend (runsc unmounts its network
// namespace) after c, when the backend has something to close.
func withRunner(r sandbox.Runner, c io.Closer) io.Closer {
	rc, ok := r.(io.Closer)
	if !ok {
		return c
	}
	if c == nil {
		return rc
	}
	return closers{c, rc}
}

// closers closes each in turn and joins their errors.
type closers []io.Closer

func (cs closers) Close() error {
	errs := make([]error, 0, len(cs))
	for _, c := range cs {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// goCache is the shared GOCACHE of go scripts and its directory.
type goCache struct {
	*exec.GoCache
	dir string
}

// findGo finds Go for go scripts and its shared cache (nil without Go),
// which prepareGo prepares.
func findGo(cfg configs.Exec) (exec.Toolchain, *goCache) {
	goRoot := findGoRoot()
	if goRoot == "" {
		return exec.Toolchain{}, nil
	}
	dir := GoCacheDir(cfg, goRoot)
	cache := exec.NewGoCache(dir, goRoot)
	mods := exec.NewModCache(filepath.Join(filepath.Dir(dir), "gomod"), goRoot, goProxy())
	return exec.Toolchain{GoRoot: goRoot, Cache: cache, Mods: mods}, &goCache{cache, dir}
}

// Close stops the cache's preparation; a nil cache has none.
func (c *goCache) Close() error {
	if c == nil {
		return nil
	}
	return c.GoCache.Close()
}

// goToolchain finds Go for go scripts and starts preparing its cache in
// the background when it is missing; go runs wait for it. The closer
// stops that preparation.
func goToolchain(cfg configs.Exec, env backendEnv) (exec.Toolchain, io.Closer) {
	tc, cache := findGo(cfg)
	if cache == nil {
		return tc, nil
	}
	prepareGo(cache, env)
	return tc, cache
}

// prepareGo starts preparing cache in the background when it is missing
// (once per machine); go runs wait for it.
func prepareGo(cache *goCache, env backendEnv) {
	if cache == nil || cache.Ready() {
		return
	}
	dir := cache.dir
	env.Log.Info("preparing the read-only GOCACHE for go scripts (once per machine; go runs wait for it)", "dir", dir)
	done := cache.Start()
	go func() {
		<-done
		if cache.Ready() {
			env.Log.Info("GOCACHE for go scripts ready", "dir", dir)
		} else {
			env.Log.Warn("GOCACHE preparation did not finish; a go run retries it", "dir", dir)
		}
	}()
}

// findGoRoot returns the GOROOT of the go on PATH, "" without one.
// goProxy is the module proxy the server's own Go would use (GOPROXY,
// else Go's default); ModCache keeps only its proxy URLs.
func goProxy() string {
	if p := os.Getenv("GOPROXY"); p != "" {
		return p
	}
	return "https://proxy.golang.org"
}

func findGoRoot() string {
	bin, err := osexec.LookPath("go")
	if err != nil {
		return ""
	}
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return ""
	}
	return filepath.Dir(filepath.Dir(real))
}

// ExecStateDir is the configured sandbox state directory, or the default
// under the XDG state directory.
func ExecStateDir(cfg configs.Exec) string {
	if cfg.StateDir != "" {
		return cfg.StateDir
	}
	return filepath.Join(stateDir(), "sandbox")
}

// GoCacheDir is the configured GOCACHE for go scripts, or the default
// under the user cache directory, per version of the Go at goRoot.
func GoCacheDir(cfg configs.Exec, goRoot string) string {
	if cfg.GoCache != "" {
		return cfg.GoCache
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	version := "unknown"
	if data, err := os.ReadFile(filepath.Join(goRoot, "VERSION")); err == nil {
		version, _, _ = strings.Cut(string(data), "\n")
	}
	return filepath.Join(dir, "toolwarden", "gocache-"+version)
}
