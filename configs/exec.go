package configs

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/toolwarden/toolwarden/internal/lazyregexp"
)

// Interpreters is the immutable allowlist of run_script interpreters.
var Interpreters = []string{"python", "bash", "go"}

// WeakerLimits are the limits whose enforcement depends on the sandbox's
// mode, by the name exec.accept_weaker_limits uses, and their keys.
var WeakerLimits = map[string]string{
	"memory": "exec.limits.memory_bytes",
	"pids":   "exec.limits.pids",
	"cpu":    "exec.limits.cpus",
}

// maxWarmPool bounds exec.warm_pool: each idle sandbox holds memory.
const maxWarmPool = 8

// maxWarmPoolIdle bounds exec.warm_pool_idle: a pool nobody uses should
// not outlive a working day.
const maxWarmPoolIdle = 24 * time.Hour

// minPids is the smallest pids limit gVisor's sentry survives.
const minPids = 1024

var commandName = lazyregexp.New(`^[a-z][a-z0-9_]{0,63}$`)

func (e Exec) validate(add func(string, string, ...any)) {
	if !slices.Contains([]string{"auto", "runsc", "bwrap"}, e.Backend) {
		add("exec.backend", "%q is not one of auto, runsc, bwrap", e.Backend)
	}
	for _, i := range e.Interpreters {
		if !slices.Contains(Interpreters, i) {
			add("exec.interpreters", "%q is not one of %v", i, Interpreters)
		}
	}
	if e.WarmPool < 0 || e.WarmPool > maxWarmPool {
		add("exec.warm_pool", "%d is outside 0..%d", e.WarmPool, maxWarmPool)
	}
	durationIn(add, "exec.warm_pool_idle", e.WarmPoolIdle, maxWarmPoolIdle)
	l := e.Limits
	durationIn(add, "exec.limits.timeout", l.Timeout, time.Hour)
	durationIn(add, "exec.limits.max_timeout", l.MaxTimeout, time.Hour)
	if l.Timeout > l.MaxTimeout {
		add("exec.limits.timeout", "%s is more than exec.limits.max_timeout (%s)", l.Timeout, l.MaxTimeout)
	}
	positive(add, "exec.limits.memory_bytes", l.MemoryBytes)
	if l.CPUs <= 0 {
		add("exec.limits.cpus", "must be more than 0")
	}
	if l.Pids < minPids {
		add("exec.limits.pids", "%d is below %d; gVisor's sentry crashes with fewer", l.Pids, minPids)
	}
	positive(add, "exec.limits.nofile", int64(l.NoFile))
	positive(add, "exec.limits.nproc", int64(l.NProc))
	positive(add, "exec.limits.file_size_bytes", l.FileSizeBytes)
	positive(add, "exec.limits.address_space_bytes", l.AddressSpaceBytes)
	positive(add, "exec.limits.scratch_bytes", l.ScratchBytes)
	positive(add, "exec.limits.output_bytes", int64(l.OutputBytes))
	positive(add, "exec.limits.max_input_bytes", int64(l.MaxInputBytes))
	for _, w := range e.AcceptWeakerLimits {
		if _, ok := WeakerLimits[w]; !ok {
			add("exec.accept_weaker_limits", "%q is not one of memory, pids, cpu", w)
		}
	}
	seen := map[string]bool{}
	for i, c := range e.Commands {
		c.validate(add, fmt.Sprintf("exec.commands[%d]", i), seen)
	}
	e.Network.validate("exec.network", add)
}

func (c Command) validate(add func(string, string, ...any), key string, seen map[string]bool) {
	if !commandName.MatchString(c.Name) {
		add(key+".name", "%q must be snake_case, at most 64 characters", c.Name)
	}
	if seen[c.Name] {
		add(key+".name", "%q is declared twice", c.Name)
	}
	seen[c.Name] = true
	if len(c.Argv) == 0 || !filepath.IsAbs(c.Argv[0]) {
		add(key+".argv", "must start with the program's absolute path")
	}
	if c.MaxArgs < 0 {
		add(key+".max_args", "must not be negative")
	}
	if c.ArgPattern != "" {
		if _, err := regexp.Compile(c.ArgPattern); err != nil {
			add(key+".arg_pattern", "not a regular expression: %v", err)
		}
	}
}

// execWidenings lists how the exec section is wider than the default.
func execWidenings(l *Loaded, def Exec) []string {
	e, d := l.Config.Exec, def.Limits
	var out []string
	widen := func(key string, wider bool, val any) {
		if wider {
			out = append(out, fmt.Sprintf("%s raised to %v (from %s)", key, val, l.Origin(key)))
		}
	}
	if e.WorkspaceWritable {
		out = append(out, "exec.workspace_writable is true: scripts can change the workspace (from "+l.Origin("exec.workspace_writable")+")")
	}
	for _, w := range e.AcceptWeakerLimits {
		out = append(out, fmt.Sprintf("exec.accept_weaker_limits: %s may be enforced less strictly than %s says, in the sandbox's mode (from %s)",
			w, WeakerLimits[w], l.Origin("exec.accept_weaker_limits")))
	}
	widen("exec.limits.timeout", e.Limits.Timeout > d.Timeout, e.Limits.Timeout)
	widen("exec.limits.max_timeout", e.Limits.MaxTimeout > d.MaxTimeout, e.Limits.MaxTimeout)
	widen("exec.limits.memory_bytes", e.Limits.MemoryBytes > d.MemoryBytes, e.Limits.MemoryBytes)
	widen("exec.limits.cpus", e.Limits.CPUs > d.CPUs, e.Limits.CPUs)
	widen("exec.limits.pids", e.Limits.Pids > d.Pids, e.Limits.Pids)
	widen("exec.limits.nofile", e.Limits.NoFile > d.NoFile, e.Limits.NoFile)
	widen("exec.limits.nproc", e.Limits.NProc > d.NProc, e.Limits.NProc)
	widen("exec.limits.file_size_bytes", e.Limits.FileSizeBytes > d.FileSizeBytes, e.Limits.FileSizeBytes)
	widen("exec.limits.address_space_bytes", e.Limits.AddressSpaceBytes > d.AddressSpaceBytes, e.Limits.AddressSpaceBytes)
	widen("exec.limits.scratch_bytes", e.Limits.ScratchBytes > d.ScratchBytes, e.Limits.ScratchBytes)
	widen("exec.limits.output_bytes", e.Limits.OutputBytes > d.OutputBytes, e.Limits.OutputBytes)
	out = append(out, networkWidenings("exec.network", l.Origin("exec.network.allow"), e.Network)...)
	for _, c := range e.Commands {
		out = append(out, fmt.Sprintf("exec.commands allows %q: %v (from %s)", c.Name, c.Argv, l.Origin("exec.commands")))
		if c.AllowFlags {
			out = append(out, fmt.Sprintf("exec.commands %q accepts flags from the model", c.Name))
		}
		if c.WorkspaceWritable {
			out = append(out, fmt.Sprintf("exec.commands %q mounts the workspace read-write", c.Name))
		}
	}
	return out
}

// limitsSet lists the mode-dependent limits whose value did not come
// from the built-in default.
func limitsSet(l *Loaded) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(WeakerLimits)) {
		if l.Origin(WeakerLimits[name]) != "default" {
			out = append(out, name)
		}
	}
	return out
}
