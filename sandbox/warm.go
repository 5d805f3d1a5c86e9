package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Warmer is a Runner that can boot sandboxes ahead of their runs.
type Warmer interface {
	// Warm keeps up to size sandboxes booted for requests shaped like
	// shapes (the same mounts and limits); size 0 turns it off. A shape
	// may also give the start of the runs' argv (an interpreter and its
	// options) and their environment: the sandboxes may then start that
	// program ahead (a stand-by, standbyFor).
	Warm(size int, shapes ...Request) error
	// WarmStats counts the pool's sandboxes and the runs that took one.
	WarmStats() WarmStats
}

// WarmerOf returns the Warmer r is, or wraps: a Runner that wraps another
// (to trace or count its runs) says so with an Unwrap method.
func WarmerOf(r Runner) (Warmer, bool) {
	for r != nil {
		if w, ok := r.(Warmer); ok {
			return w, true
		}
		u, ok := r.(interface{ Unwrap() Runner })
		if !ok {
			break
		}
		r = u.Unwrap()
	}
	return nil, false
}

// WarmStats counts a pool of sandboxes booted ahead.
type WarmStats struct {
	// Size is the most sandboxes kept booted (0: no pool).
	Size int `yaml:"size" json:"size"`
	// Idle are booted (or booting) and waiting; Warm runs took one, Cold
	// runs found none of their shape.
	Idle int `yaml:"idle" json:"idle"`
	Warm int `yaml:"warm_runs" json:"warm_runs"`
	Cold int `yaml:"cold_runs" json:"cold_runs"`
}

// warmInit is the first program of a warm sandbox. It waits on its
// standard input for the run it is given, then becomes that run's program
// with exactly the run's environment (env -i), plus HOME as runsc sets it
// when the run's has none, so that the program is the sandbox's process
// 1 with the environment of a cold start. The input is the run's
// RLIMIT_CPU in seconds ("-": none to set; rootless, where it is the
// run's CPU bound, the sandbox was booted with the most a run may have
// and a run lowers it to its own, as soft and hard limit), then a count of
// items, then each item as a count of lines and its lines (an item may
// hold newlines): the environment's KEY=VALUE entries, then argv. The rest of
// the input is the program's own stdin: sh reads a pipe a byte at a time,
// so nothing of it is consumed. The items are data to this fixed script,
// never shell code. An empty or cut input (the server went away, or
// closed the pool) ends the sandbox with status 125.
const warmInit = `set -f
IFS= read -r cpu || exit 125
[ "$cpu" = - ] || ulimit -t "$cpu" || exit 125
item() { IFS= read -r n || exit 125; v=; i=0; while [ "$i" -lt "$n" ]; do IFS= read -r l || exit 125; if [ "$i" = 0 ]; then v=$l; else v="$v
$l"; fi; i=$((i+1)); done; }
IFS= read -r count || exit 125
set -- "HOME=$HOME"
while [ "$count" -gt 0 ]; do item; set -- "$@" "$v"; count=$((count-1)); done
exec /usr/bin/env -i -- "$@"`

// warmPrograms are what warmInit needs inside the sandbox (from the
// host's read-only /usr and /bin).
var warmPrograms = []string{"/bin/sh", "/usr/bin/env"}

// warmJob encodes req's RLIMIT_CPU (cpu seconds, 0 for none), environment
// and argv for warmInit; false when env -i could misread them (an argv[0]
// that is not an absolute path or holds "=", an environment entry without
// a name), which then run cold.
func warmJob(req Request, cpu int64) ([]byte, bool) {
	if len(req.Argv) == 0 || !strings.HasPrefix(req.Argv[0], "/") || strings.Contains(req.Argv[0], "=") {
		return nil, false
	}
	for _, e := range req.Env {
		if name, _, ok := strings.Cut(e, "="); !ok || name == "" {
			return nil, false
		}
	}
	items := append(slices.Clone(req.Env), req.Argv...)
	var b bytes.Buffer
	if cpu > 0 {
		b.WriteString(strconv.FormatInt(cpu, 10) + "\n")
	} else {
		b.WriteString("-\n")
	}
	b.WriteString(strconv.Itoa(len(items)) + "\n")
	for _, it := range items {
		if strings.ContainsRune(it, 0) {
			return nil, false
		}
		lines := strings.Split(it, "\n")
		b.WriteString(strconv.Itoa(len(lines)) + "\n")
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	return b.Bytes(), true
}

// warmShape is what a sandbox is booted with and a run must match to use
// it: its mounts and limits but the timeout, which is toolwarden's (and,
// rootless, the RLIMIT_CPU the run sets, see warmInit).
type warmShape struct {
	workspace, cache string
	writable         bool
	limits           Limits
}

func (r *Runsc) shapeOf(req Request) warmShape {
	l := req.Limits.WithDefaults()
	l.Timeout = 0
	return warmShape{workspace: req.Workspace, cache: req.Cache, writable: req.WorkspaceWritable, limits: l}
}

// warmCPU is the RLIMIT_CPU a run sets in a warm sandbox: rootless its
// own CPU bound, as a cold run's spec would; as root none (0).
func (r *Runsc) warmCPU(l Limits) int64 {
	if !r.Rootless {
		return 0
	}
	return cpuSeconds(l.WithDefaults())
}

// warmSandbox is a sandbox booted ahead, its init waiting for a run.
type warmSandbox struct {
	*prepared
	shape warmShape
	// standby is its first program when not warmInit.
	standby *standby
	// cpu is the RLIMIT_CPU it was booted with (rootless): a run may
	// lower it, not raise it.
	cpu int64
	// job is the write end of the init's standard input.
	job    *os.File
	unlock func()
}

// startWarm boots a sandbox of shape sh, with boot's timeout, whose init
// (warmInit, or sb when not nil) waits for a run. It holds the netns lock
// shared until it is removed, like a run.
func (r *Runsc) startWarm(sh warmShape, boot Limits, sb *standby) (*warmSandbox, error) {
	unlock, err := lockNetns(r.StateDir, false)
	if err != nil {
		return nil, err
	}
	req := Request{Argv: []string{"/bin/sh", "-c", warmInit, "toolwarden-warm"},
		Workspace: sh.workspace, WorkspaceWritable: sh.writable, Cache: sh.cache, Limits: withTimeout(sh.limits, boot.Timeout).WithDefaults()}
	if sb != nil {
		req.Argv, req.Env = sb.argv, sb.env
	}
	p, err := prepare(r, r.StateDir, req)
	if err != nil {
		unlock()
		return nil, err
	}
	jobR, jobW, err := os.Pipe()
	if err != nil {
		p.remove()
		unlock()
		return nil, err
	}
	p.s.cmd.Stdin = jobR
	err = p.s.start()
	jobR.Close()
	if err != nil {
		jobW.Close()
		p.remove()
		unlock()
		return nil, err
	}
	return &warmSandbox{prepared: p, shape: sh, standby: sb, cpu: r.warmCPU(req.Limits), job: jobW, unlock: unlock}, nil
}

func withTimeout(l Limits, d time.Duration) Limits {
	l.Timeout = d
	return l
}

// run hands req to the waiting init and supervises it like a cold run;
// the sandbox is removed when it returns.
func (w *warmSandbox) run(ctx context.Context, req Request, job []byte) (Result, error) {
	defer w.unlock()
	defer w.remove()
	if err := writeFiles(w.filesDir, req.Files); err != nil {
		w.end()
		return Result{}, err
	}
	if w.standby != nil {
		job = w.standby.job(job)
	}
	go func() {
		// A program that exits without reading its stdin closes the
		// pipe: the write fails, which is its business, as cold.
		_, err := w.job.Write(job)
		if err == nil && len(req.Stdin) > 0 {
			_, _ = w.job.Write(req.Stdin)
		}
		w.job.Close()
	}()
	return w.supervise(ctx, req)
}

// discardWait bounds how long an unused sandbox may take to end on its
// own before it is killed.
const discardWait = 5 * time.Second

// discard removes an unused sandbox.
func (w *warmSandbox) discard() {
	defer w.unlock()
	defer w.remove()
	w.end()
}

// end stops an unused sandbox: closing its input ends the init (status
// 125), and runsc removes the container; one that does not end in time
// is killed and deleted.
func (w *warmSandbox) end() {
	w.job.Close()
	r := w.l.(*Runsc)
	select {
	case err := <-w.s.done:
		w.s.done <- err
	case <-time.After(discardWait):
		r.kill(w.id)
		_ = syscall.Kill(-w.s.cmd.Process.Pid, syscall.SIGKILL)
	}
	err := <-w.s.done
	w.s.done <- err
	r.finish(w.id, w.s, false)
}

// warmPool keeps up to size sandboxes booted, each used for one run then
// removed; a sandbox taken is replaced in the background by one of the
// same shape.
type warmPool struct {
	r    *Runsc
	size int
	// shapes are the shapes worth keeping warm, with the limits to boot
	// them with; a run of another shape runs cold and changes nothing.
	shapes []warmShape
	boot   map[warmShape]Limits
	// standby is the program a shape's sandboxes start ahead, if any: the
	// first one a shape names.
	standby map[warmShape]*standby
	mu      sync.Mutex
	idle    []*warmSandbox
	// starting counts the sandboxes of each shape being started (not yet
	// idle); ready is signalled when one is done.
	starting map[warmShape]int
	ready    *sync.Cond
	closed   bool
	wg       sync.WaitGroup
	// warm and cold count the runs that took a sandbox and those that
	// found none.
	warm, cold int
}

// Warm implements Warmer: it starts filling the pool in the background.
// Size 0 (or no shape) removes the pool's idle sandboxes and keeps none;
// a run that took one goes on.
func (r *Runsc) Warm(size int, shapes ...Request) error {
	if size <= 0 || len(shapes) == 0 {
		r.swapPool(nil)
		return nil
	}
	for _, p := range warmPrograms {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("no warm sandboxes: %s is missing: %w", p, err)
		}
	}
	p := &warmPool{r: r, size: size, starting: map[warmShape]int{}, boot: map[warmShape]Limits{}, standby: map[warmShape]*standby{}}
	p.ready = sync.NewCond(&p.mu)
	for _, s := range shapes {
		sh := r.shapeOf(s)
		if !slices.Contains(p.shapes, sh) {
			p.shapes = append(p.shapes, sh)
		}
		if l := s.Limits.WithDefaults(); l.Timeout > p.boot[sh].Timeout {
			p.boot[sh] = l
		}
		if p.standby[sh] == nil {
			p.standby[sh] = standbyFor(s.Argv, s.Env)
		}
	}
	r.swapPool(p)
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range size {
		p.spawn(p.shapes[i%len(p.shapes)])
	}
	return nil
}

// WarmStats implements Warmer.
func (r *Runsc) WarmStats() WarmStats {
	p := r.warmPool()
	if p == nil {
		return WarmStats{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return WarmStats{Size: p.size, Idle: p.count(), Warm: p.warm, Cold: p.cold}
}

// swapPool makes p the pool (nil: none) and closes the one before.
func (r *Runsc) swapPool(p *warmPool) {
	r.mu.Lock()
	old := r.pool
	r.pool = p
	r.mu.Unlock()
	if old != nil {
		old.close()
	}
}

func (r *Runsc) warmPool() *warmPool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pool
}

// count is the number of sandboxes idle or starting; p.mu is held.
func (p *warmPool) count() int {
	n := len(p.idle)
	for _, k := range p.starting {
		n += k
	}
	return n
}

// spawn starts one sandbox of shape sh in the background; p.mu is held.
func (p *warmPool) spawn(sh warmShape) {
	p.starting[sh]++
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		w, err := p.r.startWarm(sh, p.boot[sh], p.standby[sh])
		p.mu.Lock()
		p.starting[sh]--
		if err == nil && !p.closed {
			p.idle = append(p.idle, w)
			w = nil
		}
		p.ready.Broadcast()
		p.mu.Unlock()
		if w != nil {
			w.discard()
		}
	}()
}

// take returns a sandbox of shape sh, nil when there is none. The caller
// refills the pool once the run is over (refill), so that the boot of the
// replacement does not compete with the run for the CPU. A miss of a shape
// worth keeping warm replaces the oldest idle sandbox of another shape, or
// tops up a pool that lost sandboxes. A sandbox still booting is taken
// (its boot is under way); one still being set up (milliseconds) is
// waited for.
func (p *warmPool) take(sh warmShape, cpu int64) *warmSandbox {
	p.mu.Lock()
	defer p.mu.Unlock()
	var got *warmSandbox
	var gone []*warmSandbox
	for !p.closed && !slices.ContainsFunc(p.idle, func(w *warmSandbox) bool { return w.shape == sh }) && p.starting[sh] > 0 {
		p.ready.Wait()
	}
	if p.closed {
		return nil
	}
	for i := 0; i < len(p.idle) && got == nil; {
		w := p.idle[i]
		switch {
		case w.shape != sh || w.cpu < cpu:
			i++
			continue
		case w.s.exited():
			gone = append(gone, w) // its runsc failed, or was killed
		default:
			got = w
		}
		p.idle = slices.Delete(p.idle, i, i+1)
	}
	if got == nil && slices.Contains(p.shapes, sh) && p.count() >= p.size {
		if i := slices.IndexFunc(p.idle, func(w *warmSandbox) bool { return w.shape != sh }); i >= 0 {
			gone = append(gone, p.idle[i])
			p.idle = slices.Delete(p.idle, i, i+1)
		}
	}
	if got != nil {
		p.warm++
	} else {
		p.cold++
	}
	if got == nil && slices.Contains(p.shapes, sh) {
		for p.count() < p.size {
			p.spawn(sh)
		}
	}
	for _, w := range gone {
		p.wg.Add(1)
		go func() { defer p.wg.Done(); w.discard() }()
	}
	return got
}

// turnedAway counts a run of a shape a pool keeps that may not take its
// sandboxes (serves) as cold.
func (p *warmPool) turnedAway() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cold++
}

// serves reports whether a run with env may take a sandbox of shape sh
// (standby.serves); p.standby does not change once the pool is made.
func (p *warmPool) serves(sh warmShape, env []string) bool {
	return p.standby[sh].serves(env)
}

// refill tops the pool up with sandboxes of shape sh, after a run took
// one.
func (p *warmPool) refill(sh warmShape) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for !p.closed && p.count() < p.size {
		p.spawn(sh)
	}
}

// close removes every sandbox of the pool, waiting for those starting.
func (p *warmPool) close() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.ready.Broadcast()
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, w := range idle {
		wg.Add(1)
		go func() { defer wg.Done(); w.discard() }()
	}
	wg.Wait()
	p.wg.Wait()
}
