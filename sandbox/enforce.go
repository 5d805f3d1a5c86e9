package sandbox

import "os"

// Names of the limits whose enforcement depends on the mode, as operators
// list them in exec.accept_weaker_limits.
const (
	EnforceMemory = "memory"
	EnforcePids   = "pids"
	EnforceCPU    = "cpu"
)

// Enforcement says how a backend, in the mode the server runs in, really
// enforces the limits of a run. It is what `toolwarden config check`
// prints; nothing in it is a claim the backend does not make good.
type Enforcement struct {
	Backend string `yaml:"backend" json:"backend"`
	// Mode is "root" (cgroups, uid 65534) or "rootless" (user namespace,
	// the invoking user's uid).
	Mode string `yaml:"mode" json:"mode"`
	// Limits maps each limit to how it is enforced; "none" when it is not.
	Limits map[string]string `yaml:"limits" json:"limits"`
	// Weaker lists the mode-dependent limits (memory, pids, cpu) enforced
	// less strictly than the configured total of a run, or not at all.
	Weaker []string `yaml:"weaker_than_configured,omitempty" json:"weaker_than_configured,omitempty"`
}

// Enforcer is a Runner that reports its Enforcement.
type Enforcer interface{ Enforcement() Enforcement }

// EnforcementOf reports r's enforcement; a runner that does not report
// one is assumed to enforce none of the mode-dependent limits.
func EnforcementOf(r Runner) Enforcement {
	if e, ok := r.(Enforcer); ok {
		return e.Enforcement()
	}
	return Enforcement{Backend: r.Name(), Mode: "unknown", Limits: map[string]string{EnforceMemory: "none", EnforcePids: "none", EnforceCPU: "none"},
		Weaker: []string{EnforceMemory, EnforcePids, EnforceCPU}}
}

// always are the limits every backend enforces in every mode.
func always(l map[string]string) map[string]string {
	l["timeout"] = "wall clock, from toolwarden (the run is killed)"
	l["output_bytes"] = "from toolwarden, per stream (the run is killed)"
	l["scratch_bytes"] = "size of the /tmp tmpfs"
	return l
}

// cgroupEnforcement is root's: a cgroup per run, and rlimits.
func cgroupEnforcement(backend, mode string) Enforcement {
	return Enforcement{Backend: backend, Mode: mode, Limits: always(map[string]string{
		EnforceMemory: "cgroup memory limit (total of the run, no swap)",
		EnforcePids:   "cgroup pids.max (total tasks of the run)",
		EnforceCPU:    "cgroup CPU quota",
		"nofile":      "RLIMIT_NOFILE", "file_size_bytes": "RLIMIT_FSIZE", "address_space_bytes": "RLIMIT_AS",
		"nproc": "RLIMIT_NPROC",
	})}
}

// scopeEnforcement is a rootless run's in a delegated cgroup scope; nproc
// says how the backend enforces RLIMIT_NPROC there.
func scopeEnforcement(backend, nproc string) Enforcement {
	e := cgroupEnforcement(backend, "rootless")
	e.Limits["nproc"] = nproc
	e.Limits[EnforceMemory] = "delegated cgroup v2 scope MemoryMax (total of the run, no swap)"
	e.Limits[EnforcePids] = "delegated cgroup v2 scope TasksMax (total tasks of the run)"
	e.Limits[EnforceCPU] = "delegated cgroup v2 scope CPUQuota"
	return e
}

// Enforcement implements Enforcer.
func (r *Runsc) Enforcement() Enforcement {
	switch {
	case !r.Rootless:
		e := cgroupEnforcement(r.Name(), "root")
		e.Limits["nproc"] = "gVisor RLIMIT_NPROC (the run's own processes)"
		return e
	case r.Scope != nil:
		return scopeEnforcement(r.Name(), "gVisor RLIMIT_NPROC (the run's own processes)")
	}
	return Enforcement{Backend: r.Name(), Mode: "rootless", Limits: always(map[string]string{
		EnforceMemory: "gVisor RLIMIT_AS per process: memory_bytes, but at least 2 GiB (go needs it to start) and at most address_space_bytes; no total over the run's processes",
		EnforcePids:   "none (gVisor RLIMIT_NPROC bounds the run's processes to nproc)",
		EnforceCPU:    "gVisor RLIMIT_CPU per process (timeout × cpus seconds), no quota",
		"nofile":      "gVisor RLIMIT_NOFILE", "file_size_bytes": "gVisor RLIMIT_FSIZE",
		"address_space_bytes": "gVisor RLIMIT_AS (see memory)",
		"nproc":               "gVisor RLIMIT_NPROC (the run's own processes)",
	}), Weaker: []string{EnforceMemory, EnforcePids, EnforceCPU}}
}

// Enforcement implements Enforcer.
func (b *Bwrap) Enforcement() Enforcement {
	switch {
	case !b.Rootless:
		e := cgroupEnforcement(b.Name(), "root")
		e.Limits["nproc"] = "none: bubblewrap started by root does not enforce RLIMIT_NPROC (the pids cgroup bounds tasks)"
		return e
	case b.Scope != nil:
		return scopeEnforcement(b.Name(), "none: the scope's TasksMax bounds tasks")
	}
	return Enforcement{Backend: b.Name(), Mode: "rootless", Limits: always(map[string]string{
		EnforceMemory: "RLIMIT_DATA per process, set to memory_bytes (no total over the run's processes)",
		EnforcePids:   "none (RLIMIT_NPROC bounds new processes and threads to nproc)",
		EnforceCPU:    "RLIMIT_CPU per process (timeout × cpus seconds), no quota",
		"nofile":      "RLIMIT_NOFILE", "file_size_bytes": "RLIMIT_FSIZE", "address_space_bytes": "RLIMIT_AS",
		"nproc": "RLIMIT_NPROC, over the user's tasks now plus nproc",
	}), Weaker: []string{EnforceMemory, EnforcePids, EnforceCPU}}
}

// InsideUID is the uid a program sandboxed by r sees itself run as, or -1
// when r does not say: nobody as root; rootless, the invoking user's
// (bubblewrap) or the root of gVisor's user namespace, which is mapped to
// the invoking user (runsc).
func InsideUID(r Runner) int {
	switch r := r.(type) {
	case *Runsc:
		if r.Rootless {
			return 0
		}
	case *Bwrap:
		if r.Rootless {
			return os.Getuid()
		}
	default:
		return -1
	}
	return sandboxUID
}
