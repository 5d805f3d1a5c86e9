//go:build !linux

package upstream

import "syscall"

// localProcAttr puts an unsandboxed upstream in a process group of its
// own (no parent-death signal outside Linux: Close kills the group).
func localProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
