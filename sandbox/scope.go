package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// scope puts a rootless run in a transient systemd scope of the user's
// own manager, a cgroup v2 subtree systemd delegates to the user, with
// the run's memory, task and CPU limits. systemd-run --scope execs the
// command in place, so the process toolwarden supervises and kills is the
// run's own, and the scope goes away with its last process.
type scope struct {
	path string
}

// findScope returns a scope when the user's systemd manager can create
// limited scopes here (a cgroup v2 machine with a user session), proved
// by a real run; nil, with the reason, otherwise.
func findScope(ctx context.Context) (*scope, string) {
	if os.Geteuid() == 0 {
		return nil, "root uses its own cgroups"
	}
	if _, err := os.Stat(cgroupRoot + "/cgroup.controllers"); err != nil {
		return nil, "not a cgroup v2 machine"
	}
	path, err := exec.LookPath("systemd-run")
	if err != nil {
		return nil, "systemd-run not found"
	}
	s := &scope{path: path}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	argv := append(s.argv(DefaultLimits.WithDefaults()), "/usr/bin/true")
	if out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput(); err != nil {
		return nil, fmt.Sprintf("no delegated cgroup: systemd-run --user --scope: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return s, ""
}

// argv is the systemd-run prefix of a run with limits l.
func (s *scope) argv(l Limits) []string {
	return []string{s.path, "--user", "--scope", "--quiet", "--collect",
		"-p", "MemoryMax=" + strconv.FormatInt(l.MemoryBytes, 10), "-p", "MemorySwapMax=0",
		"-p", "TasksMax=" + strconv.FormatInt(l.Pids, 10),
		"-p", "CPUQuota=" + strconv.Itoa(int(l.CPUs*100)) + "%",
		"--"}
}
