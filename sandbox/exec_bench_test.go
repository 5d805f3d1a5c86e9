package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The bare benchmarks run the runtime's own command line with the same
// bundle or arguments toolwarden builds, without toolwarden's supervision,
// cgroup set-up or clean-up, so that BenchmarkRunner*'s extra time is
// toolwarden's overhead.

var benchState = filepath.Join(os.TempDir(), "toolwarden-test-sandbox", "bench")

func benchRunsc(b *testing.B) *Runsc {
	r, err := Detect(context.Background(), DetectOptions{Backend: "runsc", StateDir: benchState})
	if err != nil {
		b.Skip(err)
	}
	return r.(*Runsc)
}

func benchBwrap(b *testing.B) *Bwrap {
	r, err := Detect(context.Background(), DetectOptions{Backend: "bwrap", StateDir: benchState})
	if err != nil {
		b.Skip(err)
	}
	return r.(*Bwrap)
}

// benchArgv are the programs each benchmark runs; node (`node -e 0`, the
// start of the Node runtime that local MCP servers use) only where
// /usr/bin/node is installed.
var benchArgv = func() map[string][]string {
	m := map[string][]string{"true": {"/usr/bin/true"}, "python": {"/usr/bin/python3", "-I", "-B", "-c", "pass"}}
	if _, err := os.Stat("/usr/bin/node"); err == nil {
		m["node"] = []string{"/usr/bin/node", "-e", "0"}
	}
	return m
}()

func BenchmarkBareRunsc(b *testing.B) {
	r := benchRunsc(b)
	for name, argv := range benchArgv {
		b.Run(name, func(b *testing.B) {
			bundle := b.TempDir()
			files := b.TempDir()
			req := Request{Argv: argv, Limits: DefaultLimits}
			require.NoError(b, writeBundle(bundle, ociSpec(req, r.root, files, "", r.Rootless)))
			loopP50(b, func() {
				id := newRunID()
				out, err := exec.Command(r.Path, append(r.globalArgs(), "run", "--bundle", bundle, id)...).CombinedOutput()
				require.NoError(b, err, string(out))
			})
		})
	}
}

func BenchmarkRunnerRunsc(b *testing.B) {
	benchRunner(b, benchRunsc(b))
}

// BenchmarkRunnerRunscWarm is BenchmarkRunnerRunsc taking sandboxes
// booted ahead (2, refilled in the background while the next run goes).
func BenchmarkRunnerRunscWarm(b *testing.B) {
	r := benchRunsc(b)
	require.NoError(b, r.Warm(2, Request{}))
	defer r.Close()
	benchRunner(b, r)
}

func BenchmarkBareBwrap(b *testing.B) {
	r := benchBwrap(b)
	for name, argv := range benchArgv {
		b.Run(name, func(b *testing.B) {
			files := b.TempDir()
			req := Request{Argv: argv, Limits: DefaultLimits}
			loopP50(b, func() {
				// Rootless, the launch carries the seccomp filter's pipe.
				ln, err := r.command("", "", files, req, nil)
				require.NoError(b, err)
				cmd := exec.Command(ln.argv[0], ln.argv[1:]...)
				cmd.ExtraFiles = ln.files
				out, err := cmd.CombinedOutput()
				closeAll(ln.files)
				require.NoError(b, err, string(out))
			})
		})
	}
}

func BenchmarkRunnerBwrap(b *testing.B) {
	benchRunner(b, benchBwrap(b))
}

func BenchmarkPlainExec(b *testing.B) {
	for name, argv := range benchArgv {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				require.NoError(b, exec.Command(argv[0], argv[1:]...).Run())
			}
		})
	}
}

func benchRunner(b *testing.B, r Runner) {
	for name, argv := range benchArgv {
		b.Run(name, func(b *testing.B) {
			loopP50(b, func() {
				res, err := r.Run(context.Background(), Request{Argv: argv, Env: []string{"PATH=/usr/bin"}})
				require.NoError(b, err)
				require.Equal(b, 0, res.ExitCode, string(res.Stderr))
			})
		})
	}
}

// loopP50 runs f as the benchmark's loop and reports the median time of
// one call besides the mean: one slow outlier on a shared machine moves
// the mean of a short run, not the median.
func loopP50(b *testing.B, f func()) {
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		f()
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
}
