package mcpserver

import (
	"context"
	"os"
	"path/filepath"
)

// probeMode says how a command's build finds the sandbox backend, which
// Detect proves by booting a sandbox (~200 ms).
type probeMode int

const (
	// probeNow boots the probe: serve (when it detects at start) and
	// call, which runs what it finds.
	probeNow probeMode = iota
	// probeCached reuses this machine's last probe while it holds
	// (sandbox.DetectCached): tools and config check, which run nothing
	// and print what serve would offer.
	probeCached
	// probeLater binds the exec tools to a backend found at their first
	// run, as serve does, and anything else found at start as
	// probeCached: policy explain, which decides as serve's guard would
	// and runs nothing.
	probeLater
)

type probeModeKey struct{}

// withProbe has the builds under ctx find the sandbox as m says.
func withProbe(ctx context.Context, m probeMode) context.Context {
	return context.WithValue(ctx, probeModeKey{}, m)
}

// probeOf is ctx's probe mode; probeNow unless withProbe said otherwise.
func probeOf(ctx context.Context) probeMode {
	m, _ := ctx.Value(probeModeKey{}).(probeMode)
	return m
}

// probeCacheDir is where sandbox.DetectCached keeps this user's probe
// outcomes: the user cache directory's toolwarden/probe.
func probeCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "toolwarden", "probe")
}
