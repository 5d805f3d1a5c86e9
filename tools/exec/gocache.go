package exec

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
)

// readyMarker marks a fully prepared GOCACHE; a directory without it is
// never mounted.
const readyMarker = "toolwarden-ready"

// GoCache is the prepared, read-only GOCACHE shared by go scripts. It is
// built once, on the host, from the standard library only (trusted input),
// then only ever mounted read-only: a writable shared cache would let one
// run poison the next.
type GoCache struct {
	dir, goBin string
	ready      atomic.Bool
}

// NewGoCache returns the cache at dir for the toolchain at goRoot; it is
// ready when an earlier preparation finished.
func NewGoCache(dir, goRoot string) *GoCache {
	c := &GoCache{dir: dir, goBin: filepath.Join(goRoot, "bin", "go")}
	if _, err := os.Stat(filepath.Join(dir, readyMarker)); err == nil {
		c.ready.Store(true)
	}
	return c
}

// Dir returns the cache directory once prepared, "" before.
func (c *GoCache) Dir() string {
	if c == nil || !c.ready.Load() {
		return ""
	}
	return c.dir
}

// Prepare builds the standard library into a fresh directory with the
// environment scripts use, and moves it into place atomically.
func (c *GoCache) Prepare(ctx context.Context) error {
	if c.ready.Load() {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(c.dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(c.dir), filepath.Base(c.dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cmd := osexec.CommandContext(ctx, c.goBin, "build", "std")
	cmd.Env = append(goEnv(filepath.Dir(filepath.Dir(c.goBin)), tmp), "HOME="+tmp, "PATH=/usr/bin:/bin")
	// Cancelling stops go's compiler children too, not only go itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("prepare GOCACHE: go build std: %w: %s", err, strings.TrimSpace(string(out)))
	}
	if err := os.WriteFile(filepath.Join(tmp, readyMarker), nil, 0o644); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, c.dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(c.dir, readyMarker)); statErr != nil {
			return err
		}
		// Another server prepared it first.
	}
	c.ready.Store(true)
	return nil
}

// goEnv is the Go environment of go scripts; the cache is prepared with
// the same, so that its entries are hits.
func goEnv(goRoot, cache string) []string {
	return []string{"GOROOT=" + goRoot, "GOCACHE=" + cache, "GOTMPDIR=/tmp", "GOPATH=/tmp/go",
		"GOTOOLCHAIN=local", "GOPROXY=off", "GOTELEMETRY=off", "GOFLAGS=", "CGO_ENABLED=0",
		// A read-only GOCACHE works only without the module index, which
		// go otherwise insists on writing there.
		"GODEBUG=goindex=0"}
}
