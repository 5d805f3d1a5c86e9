package sandbox

import (
	"context"
	"time"
)

// A Runner runs one program in an isolated sandbox and removes every trace
// of it (processes, cgroups, bundle directories) before Run returns, also
// when ctx is cancelled.
type Runner interface {
	// Run runs req. A program that runs and exits, whatever its exit code,
	// or that is stopped by a limit, is a Result; an error means the
	// sandbox itself failed.
	Run(ctx context.Context, req Request) (Result, error)
	// Name names the backend, e.g. "runsc/systrap" or "bwrap".
	Name() string
}

// Request is one program to run. Every path inside the sandbox is fixed by
// the backend; a request only says what to mount, never where.
type Request struct {
	// Argv is the program and its arguments, as seen inside the sandbox.
	Argv []string
	// Env is the whole environment of the program (KEY=VALUE); nothing of
	// the server's environment is inherited.
	Env []string
	// Stdin is fed to the program; nil means empty.
	Stdin []byte
	// Files are written into a fresh directory mounted read-only at
	// FilesDir; the keys are plain file names.
	Files map[string][]byte
	// Workspace is the host directory mounted at WorkspaceDir (none if
	// empty), read-only unless WorkspaceWritable.
	Workspace         string
	WorkspaceWritable bool
	// Cache is a host directory mounted read-only at CacheDir (none if
	// empty), for example a prepared GOCACHE.
	Cache string
	// ModCache is a host directory mounted read-only at ModCacheDir
	// (none if empty): a Go module cache prepared and verified on the
	// host, for Go builds that need dependencies but no network.
	ModCache string
	Limits   Limits
	// Network is the run's only way out, through the server's egress
	// proxy; nil (the default) means no network at all.
	Network *Network
	// netMounts are the read-only binds of Network, set when the run is
	// prepared, and of StartRequest.Mounts.
	netMounts []bindMount
	// root replaces the backend's skeleton root when set (a started
	// process with mounts of its own: see Start).
	root *rootfs
}

// Fixed paths inside every sandbox.
const (
	WorkspaceDir = "/workspace"
	FilesDir     = "/run/toolwarden"
	ScratchDir   = "/tmp"
)

// Limits bound one run. Zero values are replaced by DefaultLimits.
type Limits struct {
	Timeout     time.Duration
	MemoryBytes int64
	// CPUs is the CPU quota in cores (0.5 = half a core).
	CPUs float64
	// Pids caps processes and threads; gVisor's sentry needs at least 1024.
	Pids         int64
	NoFile       uint64
	NProc        uint64
	FileSize     int64
	AddressSpace int64
	ScratchBytes int64
	// OutputBytes caps stdout and stderr each; the sandbox is killed when a
	// stream overflows.
	OutputBytes int
}

// DefaultLimits are the limits of a run that sets none.
var DefaultLimits = Limits{
	Timeout:      60 * time.Second,
	MemoryBytes:  512 << 20,
	CPUs:         1,
	Pids:         1024,
	NoFile:       256,
	NProc:        512,
	FileSize:     64 << 20,
	AddressSpace: 4 << 30,
	ScratchBytes: 64 << 20,
	OutputBytes:  256 << 10,
}

// WithDefaults fills the zero fields of l from DefaultLimits.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits
	pick := func(v, def int64) int64 {
		if v > 0 {
			return v
		}
		return def
	}
	l.Timeout = time.Duration(pick(int64(l.Timeout), int64(d.Timeout)))
	l.MemoryBytes = pick(l.MemoryBytes, d.MemoryBytes)
	l.Pids = pick(l.Pids, d.Pids)
	l.FileSize = pick(l.FileSize, d.FileSize)
	l.AddressSpace = pick(l.AddressSpace, d.AddressSpace)
	l.ScratchBytes = pick(l.ScratchBytes, d.ScratchBytes)
	l.NoFile = uint64(pick(int64(l.NoFile), int64(d.NoFile)))
	l.NProc = uint64(pick(int64(l.NProc), int64(d.NProc)))
	l.OutputBytes = int(pick(int64(l.OutputBytes), int64(d.OutputBytes)))
	if l.CPUs <= 0 {
		l.CPUs = d.CPUs
	}
	return l
}

// Which limit stopped a run.
const (
	LimitTimeout = "timeout"
	LimitMemory  = "memory"
	LimitOutput  = "output"
	LimitPids    = "pids"
	// LimitCanceled is a run stopped because its context ended before
	// its timeout (the caller was cancelled); a context whose deadline
	// passed stops it with LimitTimeout. Either way what it printed so
	// far is kept.
	LimitCanceled = "canceled"
)

// Result is how a run ended.
type Result struct {
	Stdout, Stderr                   []byte
	StdoutTruncated, StderrTruncated bool
	// ExitCode is the program's exit status, 128+N when killed by signal N,
	// or -1 when the sandbox was killed before it reported one.
	ExitCode int
	Duration time.Duration
	// Limit names the limit that stopped the run, if any.
	Limit string
}
