package sandbox

import (
	"strconv"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// sandboxUID is the user every sandboxed program runs as under root
// (nobody).
const sandboxUID = 65534

// ociSpec is the whole isolation policy of a gVisor run, in one place: a
// read-only root holding only the skeleton and read-only binds of
// root.binds, the workspace (read-only unless req says otherwise), the
// request's files read-only, size-capped tmpfs scratch, user nobody, no
// capabilities, no new privileges, rlimits, fresh namespaces including an
// empty network one. Nothing here is widened by the environment.
//
// Rootless, runsc maps the invoking user to uid 0 of its user namespace:
// the program runs as that uid 0, still with no capability, so that what
// it may read and write in the workspace is what the user may, and what it
// writes belongs to the user. There is no cgroup; gVisor's kernel enforces
// the rlimits, with memory bounded per process by RLIMIT_AS.
func ociSpec(req Request, root *rootfs, filesDir, cgroupsPath string, rootless bool) *specs.Spec {
	l := req.Limits
	uid := uint32(sandboxUID)
	var res *specs.LinuxResources
	if rootless {
		uid = 0
		l.AddressSpace = rootlessAddressSpace(l)
	} else {
		res = resources(l)
	}
	cwd := ScratchDir
	mounts := []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc"},
		{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "noexec", "mode=755", "size=1m"}},
		{Destination: ScratchDir, Type: "tmpfs", Source: "tmpfs",
			Options: []string{"nosuid", "nodev", "mode=1777", "size=" + strconv.FormatInt(l.ScratchBytes, 10)}},
		{Destination: FilesDir, Type: "bind", Source: filesDir, Options: []string{"rbind", "ro", "nosuid", "nodev"}},
	}
	for _, b := range root.binds {
		mounts = append(mounts, specs.Mount{Destination: b, Type: "bind", Source: b, Options: []string{"rbind", "ro", "nosuid", "nodev"}})
	}
	if req.Workspace != "" {
		mode := "ro"
		if req.WorkspaceWritable {
			mode = "rw"
		}
		mounts = append(mounts, specs.Mount{Destination: WorkspaceDir, Type: "bind", Source: req.Workspace,
			Options: []string{"rbind", mode, "nosuid", "nodev"}})
		cwd = WorkspaceDir
	}
	if req.Cache != "" {
		mounts = append(mounts, specs.Mount{Destination: CacheDir, Type: "bind", Source: req.Cache, Options: []string{"rbind", "ro", "nosuid", "nodev"}})
	}
	for _, m := range req.netMounts {
		mounts = append(mounts, specs.Mount{Destination: m.dst, Type: "bind", Source: m.src, Options: []string{"rbind", "ro", "nosuid", "nodev"}})
	}
	if req.ModCache != "" {
		mounts = append(mounts, specs.Mount{Destination: ModCacheDir, Type: "bind", Source: req.ModCache, Options: []string{"rbind", "ro", "nosuid", "nodev"}})
	}
	return &specs.Spec{
		Version:  specs.Version,
		Hostname: "sandbox",
		Root:     &specs.Root{Path: root.dir, Readonly: true},
		Process: &specs.Process{
			User:            specs.User{UID: uid, GID: uid},
			Args:            req.Argv,
			Env:             req.Env,
			Cwd:             cwd,
			Capabilities:    &specs.LinuxCapabilities{},
			NoNewPrivileges: true,
			Rlimits:         rlimits(l, rootless),
		},
		Mounts: mounts,
		Linux: &specs.Linux{
			Namespaces: []specs.LinuxNamespace{{Type: specs.PIDNamespace}, {Type: specs.NetworkNamespace},
				{Type: specs.IPCNamespace}, {Type: specs.UTSNamespace}, {Type: specs.MountNamespace}},
			CgroupsPath: cgroupsPath,
			Resources:   res,
		},
	}
}

// minGoAddressSpace is the address space a Go program needs to start: it
// reserves its page summaries up front (about 700 MB on amd64), and since
// Go 1.26 its heap starts at a random base, so at 1 GiB about one start
// in 25 failed "cannot allocate memory" (the egress forwarder among them).
const minGoAddressSpace = 2 << 30

// rootlessAddressSpace is RLIMIT_AS of a rootless gVisor run, the only
// per-process memory bound gVisor's kernel enforces: memory_bytes, but at
// least what go scripts need to start, and at most address_space_bytes.
func rootlessAddressSpace(l Limits) int64 {
	return min(l.AddressSpace, max(l.MemoryBytes, minGoAddressSpace))
}

// rlimits are the per-process limits of every sandboxed program.
func rlimits(l Limits, rootless bool) []specs.POSIXRlimit {
	out := []specs.POSIXRlimit{
		{Type: "RLIMIT_NOFILE", Hard: l.NoFile, Soft: l.NoFile},
		{Type: "RLIMIT_NPROC", Hard: l.NProc, Soft: l.NProc},
		{Type: "RLIMIT_FSIZE", Hard: uint64(l.FileSize), Soft: uint64(l.FileSize)},
		{Type: "RLIMIT_AS", Hard: uint64(l.AddressSpace), Soft: uint64(l.AddressSpace)},
		{Type: "RLIMIT_CORE", Hard: 0, Soft: 0},
	}
	if rootless {
		// No CPU quota without a cgroup: each process gets the CPU time
		// the quota would allow over the timeout.
		out = append(out, specs.POSIXRlimit{Type: "RLIMIT_CPU", Hard: uint64(cpuSeconds(l)), Soft: uint64(cpuSeconds(l))})
	}
	return out
}

// resources are the cgroup limits of a run; gVisor also sizes its sentry's
// memory from them.
func resources(l Limits) *specs.LinuxResources {
	period := uint64(100000)
	quota := int64(l.CPUs * float64(period))
	mem := l.MemoryBytes
	return &specs.LinuxResources{
		Memory: &specs.LinuxMemory{Limit: &mem, Swap: &mem},
		CPU:    &specs.LinuxCPU{Quota: &quota, Period: &period},
		Pids:   &specs.LinuxPids{Limit: &l.Pids},
	}
}
