package sandbox

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedSyscalls are the kernel interfaces an unprivileged sandbox never
// needs and that are a common way into the kernel from a user namespace:
// tracing, keyrings, eBPF, perf, userfaultfd, new namespaces and mounts.
var deniedSyscalls = []string{
	"ptrace", "process_vm_readv", "process_vm_writev",
	"keyctl", "add_key", "request_key",
	"bpf", "perf_event_open", "userfaultfd",
	"unshare", "setns",
	"mount", "umount2", "pivot_root", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "open_tree_attr", "mount_setattr",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"swapon", "swapoff", "reboot", "acct", "quotactl", "quotactl_fd",
	"lookup_dcookie", "iopl", "ioperm", "personality",
}

// newNamespaceFlags are the clone flags that create a namespace.
const newNamespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWTIME

// seccompPolicy is the syscall filter of an unprivileged bubblewrap run.
// It is an allowlist of every syscall of the native ABI that the library
// knows, less deniedSyscalls (EPERM) and clone with a new-namespace flag
// (EPERM); clone3, whose flags a filter cannot read, fails with ENOSYS so
// that libc falls back to clone. Anything else kills the process: the
// syscalls of another ABI (i386 through int 0x80, which would otherwise
// bypass every rule) and syscalls newer than the library's table.
func seccompPolicy() (seccomp.Policy, error) {
	native, err := arch.GetInfo("")
	if err != nil {
		return seccomp.Policy{}, err
	}
	skip := map[string]bool{"clone": true, "clone3": true}
	var denied []string
	for _, name := range deniedSyscalls {
		if _, ok := native.SyscallNames[name]; ok {
			skip[name] = true
			denied = append(denied, name)
		}
	}
	var allowed []string
	for _, name := range slices.Sorted(maps.Keys(native.SyscallNames)) {
		if !skip[name] {
			allowed = append(allowed, name)
		}
	}
	eperm := seccomp.Action(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	enosys := seccomp.Action(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	// The clone group comes last: the library's argument checks overwrite
	// the syscall number that later groups compare, so a clone that does
	// not match must fall straight to the default (kill).
	return seccomp.Policy{
		DefaultAction: seccomp.ActionKillProcess,
		Syscalls: []seccomp.SyscallGroup{
			{Names: denied, Action: eperm},
			{Names: []string{"clone3"}, Action: enosys},
			{Names: allowed, Action: seccomp.ActionAllow},
			{NamesWithCondtions: []seccomp.NameWithConditions{{Name: "clone", Conditions: seccomp.ArgumentConditions{
				{Argument: 0, Operation: seccomp.BitsNotSet, Value: newNamespaceFlags}}}}, Action: seccomp.ActionAllow},
		},
	}, nil
}

// seccompProgram is seccompPolicy assembled into the raw form bubblewrap
// reads from its --seccomp descriptor: struct sock_filter, native endian.
func seccompProgram() ([]byte, error) {
	p, err := seccompPolicy()
	if err != nil {
		return nil, err
	}
	insns, err := p.Assemble()
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	raw, err := bpf.Assemble(insns)
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	var buf bytes.Buffer
	for _, in := range raw {
		_ = binary.Write(&buf, binary.NativeEndian, struct {
			Op     uint16
			Jt, Jf uint8
			K      uint32
		}{in.Op, in.Jt, in.Jf, in.K})
	}
	return buf.Bytes(), nil
}
