package mcpserver

import (
	"bytes"
	"context"
	"errors"
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

// warmRunner is a backend that can boot sandboxes ahead.
type warmRunner struct{ sandbox.Runner }

func (warmRunner) Warm(int, ...sandbox.Request) error { return nil }
func (warmRunner) WarmStats() sandbox.WarmStats       { return sandbox.WarmStats{} }

type namedRunner string

func (n namedRunner) Run(context.Context, sandbox.Request) (sandbox.Result, error) {
	return sandbox.Result{}, nil
}
func (n namedRunner) Name() string { return string(n) }

func TestWarmPoolText(t *testing.T) {
	gvisor, bwrap := warmRunner{namedRunner("runsc/systrap")}, namedRunner("bwrap")
	for _, c := range []struct {
		r    sandbox.Runner
		cfg  configs.Exec
		got  int
		err  error
		py   bool
		want string
	}{
		{gvisor, configs.Exec{WarmPool: 2}, 2, nil, false, "2 runsc/systrap sandboxes booted ahead while serving, each used for one run and then removed"},
		{gvisor, configs.Exec{WarmPool: 3, OneShot: true}, 0, nil, true, "3 runsc/systrap sandboxes booted ahead while serving (python started in them), each used for one run and then removed"},
		{gvisor, configs.Exec{WarmPool: 0}, 0, nil, true, "off (exec.warm_pool is 0)"},
		{gvisor, configs.Exec{WarmPool: 2}, 0, errors.New("no /bin/sh"), true, "off: no /bin/sh"},
		{bwrap, configs.Exec{WarmPool: 2}, 0, nil, true, "off: the bwrap backend starts without a boot to skip"},
	} {
		require.Equal(t, c.want, warmPoolText(c.r, c.cfg, c.got, c.err, c.py))
	}
}
