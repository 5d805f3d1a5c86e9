package mcpserver

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/sandbox"
)

func TestCheckEnforcement(t *testing.T) {
	rootless := sandbox.Enforcement{Backend: "bwrap-rootless", Mode: "rootless",
		Limits: map[string]string{"memory": "RLIMIT_DATA per process", "pids": "none", "cpu": "RLIMIT_CPU per process"},
		Weaker: []string{"memory", "pids", "cpu"}}
	root := sandbox.Enforcement{Backend: "runsc/systrap", Mode: "root", Limits: map[string]string{"memory": "cgroup"}}
	for _, c := range []struct {
		name     string
		e        sandbox.Enforcement
		set, acc []string
		err      string
		accepted []string
	}{
		{name: "defaults, rootless: reported, not an error", e: rootless},
		{name: "set, root: enforced", e: root, set: []string{"memory", "pids", "cpu"}},
		{name: "memory set, rootless: start-up error naming key and mode", e: rootless, set: []string{"memory"},
			err: "exec.limits.memory_bytes is set, but the bwrap-rootless sandbox in rootless mode enforces memory only as: RLIMIT_DATA per process"},
		{name: "cpu set, rootless", e: rootless, set: []string{"cpu"}, err: "exec.limits.cpus is set"},
		{name: "set and accepted", e: rootless, set: []string{"memory"}, acc: []string{"memory"}, accepted: []string{"memory"}},
		{name: "one accepted, another not", e: rootless, set: []string{"memory", "pids"}, acc: []string{"memory"},
			err: "exec.limits.pids is set", accepted: []string{"memory"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			report, err := checkEnforcement(configs.Exec{LimitsSet: c.set, AcceptWeakerLimits: c.acc}, c.e, slog.New(slog.NewTextHandler(&logs, nil)))
			if c.err != "" {
				var fatal *startupError
				require.ErrorAs(t, err, &fatal)
				require.ErrorContains(t, err, c.err)
				require.ErrorContains(t, err, "exec.accept_weaker_limits")
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, c.accepted, report.Accepted)
			if len(c.accepted) > 0 {
				require.Contains(t, logs.String(), "widening", "an accepted weaker limit is logged at start")
			}
		})
	}
}
