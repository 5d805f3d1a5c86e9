package mcpserver

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/sandbox"
)

// laterRunner is the sandbox of a serving server's exec tools, found at
// its first need rather than at start: detection proves a backend by
// booting a sandbox (~200 ms of a start otherwise), which a server whose
// clients are never offered the exec tools need not pay, and which
// tools/list need not wait for. The first Warm (a client was offered the
// tools) or Run starts it; a Run waits for it, and answers
// backend.unavailable if no backend works.
type laterRunner struct {
	detect func(context.Context) (sandbox.Runner, error)
	// ready is called once a backend is found, before any Run uses it.
	ready  func(sandbox.Runner)
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	// r and err are set before done is closed.
	r   sandbox.Runner
	err error

	// mu orders Warm calls, the one asked before detection ended
	// (wish) and Close.
	mu      sync.Mutex
	started bool
	closed  bool
	wish    *warmWish
}

type warmWish struct {
	size   int
	shapes []sandbox.Request
}

func newLaterRunner(ctx context.Context, detect func(context.Context) (sandbox.Runner, error), ready func(sandbox.Runner)) *laterRunner {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &laterRunner{detect: detect, ready: ready, ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// start begins detection once; l.mu is held.
func (l *laterRunner) start() {
	if l.started {
		return
	}
	l.started = true
	go func() {
		r, err := l.detect(l.ctx)
		if err == nil {
			l.ready(r)
		}
		l.r, l.err = r, err
		close(l.done)
		l.mu.Lock()
		defer l.mu.Unlock()
		l.grant()
	}()
}

// found reports whether detection has ended; l.r and l.err are set then.
func (l *laterRunner) found() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// grant applies the last Warm asked, once detection has ended; l.mu is
// held.
func (l *laterRunner) grant() {
	wish := l.wish
	l.wish = nil
	if wish == nil || l.closed || l.err != nil {
		return
	}
	if w, ok := sandbox.WarmerOf(l.r); ok {
		_ = w.Warm(wish.size, wish.shapes...)
	}
}

// Warm implements sandbox.Warmer: the backend's pool, once it is found.
func (l *laterRunner) Warm(size int, shapes ...sandbox.Request) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.wish = &warmWish{size: size, shapes: shapes}
	l.start()
	if l.found() {
		l.grant()
	}
	return nil
}

// WarmStats implements sandbox.Warmer.
func (l *laterRunner) WarmStats() sandbox.WarmStats {
	if !l.found() || l.err != nil {
		return sandbox.WarmStats{}
	}
	if w, ok := sandbox.WarmerOf(l.r); ok {
		return w.WarmStats()
	}
	return sandbox.WarmStats{}
}

// Run implements sandbox.Runner: it waits for the backend.
func (l *laterRunner) Run(ctx context.Context, req sandbox.Request) (sandbox.Result, error) {
	l.mu.Lock()
	l.start()
	l.mu.Unlock()
	select {
	case <-l.done:
	case <-ctx.Done():
		return sandbox.Result{}, ctx.Err()
	}
	if l.err != nil {
		format := "no working sandbox backend: %v"
		if errors.Is(l.err, sandbox.ErrNoBackend) {
			format = "%v" // it says so itself
		}
		return sandbox.Result{}, toolerr.Wrap(l.err, toolerr.BackendUnavailable,
			"No sandbox works on the server's machine; tell its operator (`toolwarden config check` says why).",
			format, l.err).WithRule("exec.backend")
	}
	return l.r.Run(ctx, req)
}

// Name implements sandbox.Runner: the backend's, once found.
func (l *laterRunner) Name() string {
	if !l.found() || l.err != nil {
		return "none yet"
	}
	return l.r.Name()
}

// Close stops a detection under way and closes the backend found.
func (l *laterRunner) Close() error {
	l.mu.Lock()
	l.closed = true
	started := l.started
	l.mu.Unlock()
	l.cancel()
	if !started {
		return nil
	}
	<-l.done
	if c, ok := l.r.(io.Closer); ok && l.err == nil {
		return c.Close()
	}
	return nil
}
