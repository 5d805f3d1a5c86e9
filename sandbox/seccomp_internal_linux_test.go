package sandbox

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// TestSeccompPolicy runs the assembled filter in x/net/bpf's VM on
// hand-made seccomp_data. The VM loads words big-endian, so the data is
// written big-endian and the filter reads the values the kernel would.
func TestSeccompPolicy(t *testing.T) {
	p, err := seccompPolicy()
	require.NoError(t, err)
	insns, err := p.Assemble()
	require.NoError(t, err)
	vm, err := bpf.NewVM(insns)
	require.NoError(t, err)
	const x86_64, i386 = 0xc000003e, 0x40000003
	eperm := unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	for _, c := range []struct {
		name     string
		arch, nr uint32
		arg0     uint32
		want     uint32
	}{
		{"read is allowed", x86_64, unix.SYS_READ, 0, unix.SECCOMP_RET_ALLOW},
		{"execve is allowed", x86_64, unix.SYS_EXECVE, 0, unix.SECCOMP_RET_ALLOW},
		{"fork-style clone is allowed", x86_64, unix.SYS_CLONE, unix.CLONE_CHILD_SETTID | unix.CLONE_CHILD_CLEARTID | uint32(unix.SIGCHLD), unix.SECCOMP_RET_ALLOW},
		{"thread clone is allowed", x86_64, unix.SYS_CLONE, unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD, unix.SECCOMP_RET_ALLOW},
		{"clone into a new user namespace kills", x86_64, unix.SYS_CLONE, unix.CLONE_NEWUSER | uint32(unix.SIGCHLD), unix.SECCOMP_RET_KILL_PROCESS},
		{"clone into a new network namespace kills", x86_64, unix.SYS_CLONE, unix.CLONE_NEWNET, unix.SECCOMP_RET_KILL_PROCESS},
		{"clone3 is ENOSYS so libc falls back to clone", x86_64, unix.SYS_CLONE3, 0, unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		{"ptrace", x86_64, unix.SYS_PTRACE, 0, eperm},
		{"keyctl", x86_64, unix.SYS_KEYCTL, 0, eperm},
		{"add_key", x86_64, unix.SYS_ADD_KEY, 0, eperm},
		{"bpf", x86_64, unix.SYS_BPF, 0, eperm},
		{"perf_event_open", x86_64, unix.SYS_PERF_EVENT_OPEN, 0, eperm},
		{"userfaultfd", x86_64, unix.SYS_USERFAULTFD, 0, eperm},
		{"unshare", x86_64, unix.SYS_UNSHARE, 0, eperm},
		{"setns", x86_64, unix.SYS_SETNS, 0, eperm},
		{"mount", x86_64, unix.SYS_MOUNT, 0, eperm},
		{"x32 ABI", x86_64, unix.SYS_PTRACE | 0x40000000, 0, unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		{"i386 ABI (int 0x80) kills", i386, 26 /* i386 ptrace */, 0, unix.SECCOMP_RET_KILL_PROCESS},
		{"a syscall newer than the table kills", x86_64, 999, 0, unix.SECCOMP_RET_KILL_PROCESS},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := make([]byte, 64) // struct seccomp_data
			binary.BigEndian.PutUint32(data[0:], c.nr)
			binary.BigEndian.PutUint32(data[4:], c.arch)
			binary.BigEndian.PutUint32(data[16:], c.arg0) // low word of args[0]
			got, err := vm.Run(data)
			require.NoError(t, err)
			require.Equal(t, c.want, uint32(got), "filter result %#x, want %#x", got, c.want)
		})
	}
}

func TestSeccompProgramIsRawSockFilter(t *testing.T) {
	prog, err := seccompProgram()
	require.NoError(t, err)
	require.Zero(t, len(prog)%8, "struct sock_filter is 8 bytes")
	require.Greater(t, len(prog)/8, 300, "an allowlist of the native ABI")
}
