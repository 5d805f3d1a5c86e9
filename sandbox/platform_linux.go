package sandbox

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// detachMount lazily unmounts p without following a symlink there.
func detachMount(p string) error {
	return unix.Unmount(p, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW)
}

// groupAttr puts a run in a process group of its own, killed with the
// server (Pdeathsig) so a crashed server leaves no sandbox behind.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
