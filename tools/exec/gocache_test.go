package exec

import (
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// fakeGo is a GOROOT whose bin/go counts its runs in count, sleeps for
// the seconds in delay and exits with the status in rc: a stand-in for a
// slow or failing `go build std`.
type fakeGo struct{ root string }

func newFakeGo(t *testing.T, delay string, rc int) fakeGo {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "bin"), 0o755))
	script := "#!/bin/sh\nd=$(dirname \"$0\")\necho run >>\"$d/count\"\nfor i in $(seq 1 250); do echo built >\"$GOCACHE/e$i\"; done\n" +
		"sleep \"$(cat \"$d/delay\")\"\nexit \"$(cat \"$d/rc\")\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(root, "bin", "go"), []byte(script), 0o755))
	f := fakeGo{root}
	f.set(t, delay, rc)
	return f
}

func (f fakeGo) set(t *testing.T, delay string, rc int) {
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "bin", "delay"), []byte(delay), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "bin", "rc"), []byte(strconv.Itoa(rc)), 0o644))
}

func (f fakeGo) runs(t *testing.T) int {
	data, err := os.ReadFile(filepath.Join(f.root, "bin", "count"))
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(data), "run")
}

func TestGoCachePreparedOncePerMachine(t *testing.T) {
	fake := newFakeGo(t, "0.3", 0)
	dir := filepath.Join(t.TempDir(), "gocache")
	// Three server processes sharing the cache directory.
	caches := []*GoCache{NewGoCache(dir, fake.root), NewGoCache(dir, fake.root), NewGoCache(dir, fake.root)}
	var wg sync.WaitGroup
	for _, c := range caches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := c.Wait(context.Background(), nil)
			require.NoError(t, err)
			require.Equal(t, dir, got)
		}()
	}
	wg.Wait()
	require.Equal(t, 1, fake.runs(t), "one preparation for all processes")
	require.FileExists(t, filepath.Join(dir, "e250"))
	require.FileExists(t, filepath.Join(dir, readyMarker))
}

func TestGoCacheRemovesStalePreparations(t *testing.T) {
	fake := newFakeGo(t, "0", 0)
	dir := filepath.Join(t.TempDir(), "gocache-go1")
	stale := dir + ".tmp-123"
	require.NoError(t, os.MkdirAll(filepath.Join(stale, "aa"), 0o755))
	NewGoCache(dir, fake.root)
	require.NoDirExists(t, stale, "a killed process's half-built cache is removed at start")
}

func TestGoCacheWaitTimesOutWithClearError(t *testing.T) {
	fake := newFakeGo(t, "5", 0)
	c := NewGoCache(filepath.Join(t.TempDir(), "gocache"), fake.root)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	dir, err := c.Wait(ctx, nil)
	require.Empty(t, dir, "a half-built cache is never handed out")
	te := toolerr.As(err)
	require.Equal(t, toolerr.BackendUnavailable, te.Code)
	require.Equal(t, "exec.go_cache", te.Rule)
	require.Contains(t, te.Message, "still being prepared")
	require.Contains(t, te.Hint, "Retry")
}

func TestGoCacheFailureIsReportedAndRetried(t *testing.T) {
	fake := newFakeGo(t, "0", 3)
	dir := filepath.Join(t.TempDir(), "gocache")
	c := NewGoCache(dir, fake.root)
	_, err := c.Wait(context.Background(), nil)
	te := toolerr.As(err)
	require.Equal(t, toolerr.BackendUnavailable, te.Code)
	require.Contains(t, te.Message, "could not be prepared")
	require.NoDirExists(t, dir)
	matches, _ := filepath.Glob(dir + ".tmp-*")
	require.Empty(t, matches, "a failed preparation leaves nothing behind")

	fake.set(t, "0", 0) // the cause is fixed: the next run prepares again
	got, err := c.Wait(context.Background(), nil)
	require.NoError(t, err)
	require.Equal(t, dir, got)
	require.Equal(t, 2, fake.runs(t))
}

func TestGoCacheReadinessRecheckedEveryRun(t *testing.T) {
	fake := newFakeGo(t, "0", 0)
	dir := filepath.Join(t.TempDir(), "gocache")
	c := NewGoCache(dir, fake.root)
	require.Empty(t, c.Dir())
	// Another process prepares it: this one sees it without restarting.
	require.NoError(t, NewGoCache(dir, fake.root).Prepare(context.Background()))
	require.Equal(t, dir, c.Dir())
	// An operator removes it: it is not mounted any more, and the next
	// run prepares it again.
	require.NoError(t, os.RemoveAll(dir))
	require.Empty(t, c.Dir())
	got, err := c.Wait(context.Background(), nil)
	require.NoError(t, err)
	require.Equal(t, dir, got)
	require.Equal(t, 2, fake.runs(t))
}

func TestGoCacheWaitReportsProgress(t *testing.T) {
	fake := newFakeGo(t, "2.5", 0)
	c := NewGoCache(filepath.Join(t.TempDir(), "gocache"), fake.root)
	var calls []time.Duration
	_, err := c.Wait(context.Background(), func(waited time.Duration) { calls = append(calls, waited) })
	require.NoError(t, err)
	require.NotEmpty(t, calls, "a wait longer than %s reports progress", progressEvery)
}

func TestGoCacheRefusesEmptyOrOldCache(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gocache")
	// An older toolwarden marked an empty cache ready: it is rebuilt.
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, readyMarker), nil, 0o644))
	fake := newFakeGo(t, "0", 0)
	c := NewGoCache(dir, fake.root)
	require.Empty(t, c.Dir(), "an old, empty cache is not mounted")
	got, err := c.Wait(context.Background(), nil)
	require.NoError(t, err)
	require.Equal(t, dir, got)
	require.FileExists(t, filepath.Join(dir, "e250"))

	// A build that exits 0 but fills nothing is a failure, not a cache.
	empty := newFakeGo(t, "0", 0)
	require.NoError(t, os.WriteFile(filepath.Join(empty.root, "bin", "go"), []byte("#!/bin/sh\nexit 0\n"), 0o755))
	_, err = NewGoCache(filepath.Join(t.TempDir(), "gocache"), empty.root).Wait(context.Background(), nil)
	require.ErrorContains(t, err, "left 0 files in the cache")
}

// A preparation cancelled while the real go builds (a server stopping
// mid-preparation) leaves nothing behind: neither its half-built cache nor
// go's own work directory, which go removes only when it exits by itself
// (it was made in /tmp, and one was left there each time).
func TestGoCacheCancelledBuildLeavesNothing(t *testing.T) {
	out, err := osexec.Command("go", "env", "GOROOT").Output()
	require.NoError(t, err, "the test needs the go toolchain on PATH")
	parent := t.TempDir()
	c := NewGoCache(filepath.Join(parent, "gocache"), strings.TrimSpace(string(out)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Prepare(ctx) }()

	work := filepath.Join(parent, "gocache.tmp-*", workDir, "go-build*")
	deadline := time.Now().Add(2 * time.Minute)
	for matches, _ := filepath.Glob(work); len(matches) == 0; matches, _ = filepath.Glob(work) {
		select {
		case err := <-done:
			t.Fatalf("the preparation ended (%v) before go's work directory appeared in it", err)
		default:
		}
		require.True(t, time.Now().Before(deadline), "go's work directory was not made inside the preparation's")
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	require.ErrorContains(t, <-done, "go build std")
	left, err := os.ReadDir(parent)
	require.NoError(t, err)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	require.Equal(t, []string{"gocache.lock"}, names, "only the lock file is left")
}
