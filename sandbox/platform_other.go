//go:build !linux

package sandbox

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// detachMount: runsc's network namespace mount exists only on Linux, the
// one platform the sandbox runtimes run on; elsewhere there is nothing to
// unmount. The binary still builds (release archives for darwin), serving
// the tools that need no sandbox.
func detachMount(string) error { return unix.EINVAL }

// groupAttr puts a run in a process group of its own (no Pdeathsig off Linux).
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
