package upstream

import "syscall"

// localProcAttr puts an unsandboxed upstream in a process group of its
// own, killed when the server's thread that started it ends.
func localProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
