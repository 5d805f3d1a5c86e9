package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeRuntime writes an executable runsc at dir that logs each invocation
// to log and fails, as a runtime that does not work here; body is extra
// script text, so that a rewrite changes the binary.
func fakeRuntime(t *testing.T, dir, log, body string) string {
	t.Helper()
	path := filepath.Join(dir, "runsc")
	script := "#!/bin/sh\necho \"$*\" >>" + log + "\n" + body + "\nexit 3\n"
	require.NoError(t, os.WriteFile(path, []byte(script), 0o755))
	return path
}

// invocations counts the fake runtime's logged invocations.
func invocations(t *testing.T, log string) int {
	t.Helper()
	data, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(data), "\n")
}

// The probe's outcome is cached: a second detection starts no process
// and says the same; changing the runtime's binary (its size, or only its
// mtime) runs the probe again.
func TestDetectCachedProbesOnlyWhenStale(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	cache := filepath.Join(dir, "cache")
	opt := DetectOptions{Backend: "runsc", RunscPath: fakeRuntime(t, dir, log, ""), StateDir: filepath.Join(dir, "state")}
	ctx := context.Background()

	_, cached, first := DetectCached(ctx, opt, cache)
	require.ErrorIs(t, first, ErrNoBackend)
	require.False(t, cached)
	probes := invocations(t, log)
	require.Positive(t, probes, "the fake runtime was asked")

	_, cached, again := DetectCached(ctx, opt, cache)
	require.True(t, cached)
	require.Equal(t, first.Error(), again.Error(), "the same outcome, word for word")
	require.Equal(t, probes, invocations(t, log), "no process started on a cache hit")

	fakeRuntime(t, dir, log, "# a new build")
	_, cached, _ = DetectCached(ctx, opt, cache)
	require.False(t, cached, "a changed binary runs the probe again")
	require.Greater(t, invocations(t, log), probes)

	probes = invocations(t, log)
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(opt.RunscPath, later, later))
	_, cached, _ = DetectCached(ctx, opt, cache)
	require.False(t, cached, "a touched binary runs the probe again")
	require.Greater(t, invocations(t, log), probes)

	probes = invocations(t, log)
	other := opt
	other.StateDir = filepath.Join(dir, "state2")
	_, cached, _ = DetectCached(ctx, other, cache)
	require.False(t, cached, "other options have a record of their own")
	_, cached, _ = DetectCached(ctx, opt, cache)
	require.True(t, cached, "and leave this one's alone")
	require.Greater(t, invocations(t, log), probes)
}

// A cache file is trusted only as the user's own, and only as a record of
// a known candidate: anything else is ignored and the probe runs.
func TestDetectCachedRefusesHostileRecords(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	cache := filepath.Join(dir, "cache")
	opt := DetectOptions{Backend: "runsc", RunscPath: fakeRuntime(t, dir, log, ""), StateDir: filepath.Join(dir, "state")}
	ctx := context.Background()
	_, _, want := DetectCached(ctx, opt, cache)
	require.ErrorIs(t, want, ErrNoBackend)
	fp, err := probeFingerprint(opt)
	require.NoError(t, err)
	path := filepath.Join(cache, "probe-"+probeKey(opt)+".json")

	for name, tc := range map[string]struct {
		record string
		mode   os.FileMode
	}{
		"a flag smuggled in":         {`{"fingerprint":"` + fp + `","backend":"runsc","platform":"systrap","flags":["--network=host"]}`, 0o600},
		"a platform with a flag":     {`{"fingerprint":"` + fp + `","backend":"runsc","platform":"systrap --network=host"}`, 0o600},
		"a backend not allowed":      {`{"fingerprint":"` + fp + `","backend":"bwrap"}`, 0o600},
		"a backend that is no such":  {`{"fingerprint":"` + fp + `","backend":"none"}`, 0o600},
		"writable by others":         {`{"fingerprint":"` + fp + `","err":"planted"}`, 0o666},
		"not JSON":                   {"runsc systrap", 0o600},
		"an empty record":            {`{"fingerprint":"` + fp + `"}`, 0o600},
		"another machine's":          {`{"fingerprint":"0000","err":"planted"}`, 0o600},
		"two records, one after one": {`{"fingerprint":"` + fp + `","err":"x"} {"err":"y"}`, 0o600},
	} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(path, []byte(tc.record), 0o600))
			require.NoError(t, os.Chmod(path, tc.mode))
			probes := invocations(t, log)
			r, cached, err := DetectCached(ctx, opt, cache)
			require.False(t, cached, "the record is ignored")
			require.Nil(t, r)
			require.Equal(t, want.Error(), err.Error(), "the probe's own outcome")
			require.Greater(t, invocations(t, log), probes, "the probe ran")
			info, err := os.Stat(path)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "rewritten as the user's own")
		})
	}
}

// A cache directory others may write to is not used at all.
func TestDetectCachedRefusesSharedDirectory(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	cache := filepath.Join(dir, "cache")
	require.NoError(t, os.Mkdir(cache, 0o700))
	require.NoError(t, os.Chmod(cache, 0o777))
	opt := DetectOptions{Backend: "runsc", RunscPath: fakeRuntime(t, dir, log, ""), StateDir: filepath.Join(dir, "state")}
	for range 2 {
		_, cached, err := DetectCached(context.Background(), opt, cache)
		require.ErrorIs(t, err, ErrNoBackend)
		require.False(t, cached)
	}
	entries, err := os.ReadDir(cache)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing written where others can write")
}

// With a real backend, the runner from the cache is the probed one: the
// same name and enforcement, and it runs a program.
func TestDetectCachedRealBackend(t *testing.T) {
	for _, backend := range []string{"runsc", "bwrap"} {
		t.Run(backend, func(t *testing.T) {
			opt := DetectOptions{Backend: backend, StateDir: filepath.Join(os.TempDir(), "toolwarden-test-sandbox", "cache-"+backend)}
			cache := t.TempDir()
			probed, cached, err := DetectCached(context.Background(), opt, cache)
			if err != nil {
				t.Skipf("no %s here: %v", backend, err)
			}
			require.False(t, cached)
			defer closeRunner(probed)
			r, cached, err := DetectCached(context.Background(), opt, cache)
			require.NoError(t, err)
			require.True(t, cached)
			defer closeRunner(r)
			require.Equal(t, probed.Name(), r.Name())
			require.Equal(t, EnforcementOf(probed), EnforcementOf(r))
			res, err := r.Run(context.Background(), Request{Argv: []string{"/usr/bin/true"}, Limits: Limits{Timeout: time.Minute}})
			require.NoError(t, err)
			require.Zero(t, res.ExitCode, "%s", res.Stderr)
			_, warmer := WarmerOf(r)
			_, probedWarmer := WarmerOf(probed)
			require.Equal(t, probedWarmer, warmer)
		})
	}
}

func closeRunner(r Runner) {
	if c, ok := r.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}
