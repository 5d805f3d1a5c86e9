package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
)

// readyMarker marks a fully prepared GOCACHE; a directory without it, or
// whose marker lacks readyStamp (an older toolwarden's, which could mark
// an empty cache ready), is never mounted.
const (
	readyMarker = "toolwarden-ready"
	readyStamp  = "toolwarden gocache v2\n"
	// workDir, in a preparation's directory, is go's GOTMPDIR there.
	workDir = "gotmp"
)

// minEntries is fewer cache entries than `go build std` ever leaves; a
// build that left fewer did not fill the cache.
const minEntries = 200

// lockPoll is how often a waiter retries the machine-wide preparation lock.
const lockPoll = 200 * time.Millisecond

// GoCache is the prepared, read-only GOCACHE shared by go scripts. It is
// built once per machine, on the host, from the standard library only
// (trusted input), then only ever mounted read-only: a writable shared
// cache would let one run poison the next. Server processes sharing a
// cache directory take turns through a lock file beside it, so only one
// of them builds it; a go run waits for it rather than compile the
// standard library inside its small scratch space.
type GoCache struct {
	dir, goBin string

	// bg bounds background preparations: the server's lifetime, never a
	// call's, so a call that gives up waiting does not waste the work.
	bg     context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	running chan struct{} // closed when the current preparation ends
	started time.Time     // when the current or last preparation began
	lastErr error         // how the last preparation failed, nil if it did not
}

// NewGoCache returns the cache at dir for the toolchain at goRoot. It
// removes preparations that an earlier, killed process left half-built.
func NewGoCache(dir, goRoot string) *GoCache {
	ctx, cancel := context.WithCancel(context.Background())
	c := &GoCache{dir: dir, goBin: filepath.Join(goRoot, "bin", "go"), bg: ctx, cancel: cancel}
	if unlock, err := c.tryLock(); err == nil && unlock != nil {
		c.removeStale()
		unlock()
	}
	return c
}

// Ready reports whether the prepared cache is in place; it looks at the
// disk every time, since another process may have prepared it or an
// operator removed it since the last run.
func (c *GoCache) Ready() bool {
	data, err := os.ReadFile(filepath.Join(c.dir, readyMarker))
	return err == nil && string(data) == readyStamp
}

// Dir returns the cache directory once prepared, "" before.
func (c *GoCache) Dir() string {
	if c == nil || !c.Ready() {
		return ""
	}
	return c.dir
}

// Close stops a background preparation and waits for it to end.
func (c *GoCache) Close() error {
	c.cancel()
	c.mu.Lock()
	running := c.running
	c.mu.Unlock()
	if running != nil {
		<-running
	}
	return nil
}

// Start begins preparing the cache in the background unless it is ready
// or already being prepared by this process, and returns a channel closed
// when that preparation ends.
func (c *GoCache) Start() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running != nil {
		return c.running
	}
	done := make(chan struct{})
	if c.Ready() {
		close(done)
		return done
	}
	c.running, c.started, c.lastErr = done, time.Now(), nil
	go func() {
		err := c.Prepare(c.bg)
		c.mu.Lock()
		c.running, c.lastErr = nil, err
		c.mu.Unlock()
		close(done)
	}()
	return done
}

// Wait returns the prepared cache directory, starting the preparation if
// needed and waiting for it until ctx ends. progress is called every
// progressEvery while it waits. When ctx ends first, or the preparation
// failed, the error says so and when to retry: a go run never falls back
// to compiling the standard library in its scratch space.
func (c *GoCache) Wait(ctx context.Context, progress func(waited time.Duration)) (string, error) {
	start := time.Now()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		done := c.Start()
		select {
		case <-done:
			if dir := c.Dir(); dir != "" {
				return dir, nil
			}
			c.mu.Lock()
			err := c.lastErr
			c.mu.Unlock()
			if err == nil {
				continue // removed right after it was made: prepare again
			}
			return "", toolerr.Wrap(err, toolerr.BackendUnavailable,
				"The server could not prepare Go's build cache; tell the operator (the server log has the reason). python and bash scripts still work.",
				"the Go build cache could not be prepared: %v", err).WithRule("exec.go_cache")
		case <-tick.C:
			if progress != nil {
				progress(time.Since(start))
			}
		case <-ctx.Done():
			c.mu.Lock()
			began := time.Since(c.started).Round(time.Second)
			c.mu.Unlock()
			return "", toolerr.New(toolerr.BackendUnavailable,
				"Retry this call in about 60 s (the first go script on a machine waits for this once), or use python or bash meanwhile.",
				"the Go build cache for go scripts is still being prepared (for %s so far; it takes 1-3 minutes once per machine)", began).WithRule("exec.go_cache")
		}
	}
}

// Prepare builds the standard library into a fresh directory with the
// environment scripts use, and moves it into place atomically. One
// process on the machine prepares at a time; the others wait for its
// lock and then find the cache ready.
func (c *GoCache) Prepare(ctx context.Context) error {
	if c.Ready() {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(c.dir), 0o755); err != nil {
		return err
	}
	unlock, err := c.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if c.Ready() {
		return nil // another process prepared it while this one waited
	}
	c.removeStale()
	return c.build(ctx)
}

// build runs `go build std` into a temporary directory and renames it into
// place; the caller holds the lock.
func (c *GoCache) build(ctx context.Context) error {
	tmp, err := os.MkdirTemp(filepath.Dir(c.dir), filepath.Base(c.dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// go's own work directory goes inside tmp too: go removes it when it
	// exits, but not when cancelling kills it, and one left in /tmp each
	// time a server stops mid-preparation would pile up there (this
	// GOTMPDIR, later in the environment, wins over goEnv's).
	work := filepath.Join(tmp, workDir)
	if err := os.Mkdir(work, 0o700); err != nil {
		return err
	}
	cmd := osexec.CommandContext(ctx, c.goBin, "build", "std")
	cmd.Env = append(goEnv(filepath.Dir(filepath.Dir(c.goBin)), tmp), "HOME="+tmp, "PATH=/usr/bin:/bin", "GOTMPDIR="+work)
	// Cancelling stops go's compiler children too, not only go itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("prepare GOCACHE: go build std: %w: %s", err, strings.TrimSpace(string(out)))
	}
	if err := os.RemoveAll(work); err != nil {
		return err
	}
	if err := seal(tmp); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, readyMarker), []byte(readyStamp), 0o644); err != nil {
		return err
	}
	// A directory left without its marker (an operator's partial delete)
	// is in the way of the rename.
	if err := os.RemoveAll(c.dir); err != nil {
		return err
	}
	return os.Rename(tmp, c.dir)
}

// seal checks that the build filled dir and makes it readable by the
// sandbox's unprivileged user whatever the server's umask: directories
// 0755, files 0644.
func seal(dir string) error {
	entries := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, 0o755)
		}
		entries++
		return os.Chmod(p, 0o644)
	})
	if err == nil && entries < minEntries {
		err = fmt.Errorf("prepare GOCACHE: go build std left %d files in the cache, expected at least %d", entries, minEntries)
	}
	return err
}

// removeStale deletes preparations left by killed processes; the caller
// holds the lock, so no live preparation is among them.
func (c *GoCache) removeStale() {
	stale, _ := filepath.Glob(filepath.Join(filepath.Dir(c.dir), filepath.Base(c.dir)+".tmp-*"))
	for _, d := range stale {
		_ = os.RemoveAll(d)
	}
}

// lock takes the machine-wide preparation lock, waiting until ctx ends.
func (c *GoCache) lock(ctx context.Context) (unlock func(), err error) {
	for {
		unlock, err := c.tryLock()
		if err != nil || unlock != nil {
			return unlock, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(lockPoll):
		}
	}
}

// tryLock takes the lock if it is free; unlock is nil when another
// process holds it. The kernel releases it when a holder dies.
func (c *GoCache) tryLock() (unlock func(), err error) {
	f, err := os.OpenFile(c.dir+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, err
	}
	return func() { f.Close() }, nil
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

// waitGoCache waits, at most timeout and while ctx lasts, for the prepared
// GOCACHE, telling the client how long it has waited.
func waitGoCache(ctx context.Context, c *GoCache, timeout time.Duration) (string, error) {
	if c == nil {
		return "", toolerr.New(toolerr.BackendUnavailable, "Tell the operator; Go is not on the server's PATH.",
			"no Go toolchain was found for this run").WithRule("exec.go_cache")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return c.Wait(ctx, func(waited time.Duration) {
		el := waited.Round(time.Second)
		tools.Progress(ctx, el.Seconds(), timeout.Seconds(),
			"waiting "+el.String()+" for Go's build cache, prepared once per machine")
	})
}

// WaitGoCache is waitGoCache for other sandboxed Go runs (declared tools).
func WaitGoCache(ctx context.Context, c *GoCache, timeout time.Duration) (string, error) {
	return waitGoCache(ctx, c, timeout)
}
