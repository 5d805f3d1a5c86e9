package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/mcpserver"
)

// probeLog makes a runsc at dir that logs each invocation to the returned
// file and fails, as a runtime that does not work here.
func probeLog(t *testing.T, f *fixture) string {
	t.Helper()
	log := filepath.Join(f.parent, "runsc-calls")
	runsc := filepath.Join(f.parent, "runsc")
	require.NoError(t, os.WriteFile(runsc, []byte("#!/bin/sh\necho \"$*\" >>"+log+"\nexit 3\n"), 0o755))
	withExec(t, f)
	f.cfg.Exec.Backend, f.cfg.Exec.RunscPath = "runsc", runsc
	t.Setenv("XDG_CACHE_HOME", filepath.Join(f.parent, "cache"))
	return log
}

// probes counts the runtime's invocations so far.
func probes(t *testing.T, log string) int {
	t.Helper()
	data, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(data), "\n")
}

// tools and config check print the same with the probe's outcome cached
// as after probing, and the second run starts no runtime process.
func TestOneShotCommandsSameFromProbeCache(t *testing.T) {
	f := newFixture(t)
	log := probeLog(t, f)
	l := &configs.Loaded{Config: f.cfg}
	run := func() (tools, check string) {
		var list, digest, effective bytes.Buffer
		require.NoError(t, mcpserver.PrintTools(ctxT(t), l, &list, &digest))
		require.NoError(t, mcpserver.CheckConfig(ctxT(t), l, &effective))
		return list.String() + digest.String(), effective.String()
	}
	missTools, missCheck := run()
	require.Positive(t, probes(t, log), "the first run probed")
	require.Contains(t, missCheck, "unavailable_toolsets:\n  - toolset: exec\n    reason: 'no working sandbox backend:")
	before := probes(t, log)
	hitTools, hitCheck := run()
	require.Equal(t, before, probes(t, log), "no probe while the cache holds")
	require.Equal(t, missTools, hitTools)
	require.Equal(t, missCheck, hitCheck)
}

// policy explain decides as serve's guard would, without probing: serve
// finds the exec tools' sandbox at their first run, so explain knows
// run_script whatever this machine's sandbox, and boots nothing.
func TestExplainBootsNoProbe(t *testing.T) {
	f := newFixture(t)
	log := probeLog(t, f)
	var out bytes.Buffer
	v, err := mcpserver.ExplainPolicy(ctxT(t), &configs.Loaded{Config: f.cfg}, mcpserver.ExplainRequest{
		Tool: "run_script", Args: json.RawMessage(`{"interpreter":"bash","script":"true"}`), JSON: true}, &out)
	require.NoError(t, err)
	require.True(t, v.Allowed(), out.String())
	require.Zero(t, probes(t, log), "no runtime process started")
}
