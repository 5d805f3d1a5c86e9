package sandbox

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// rootlessRlimits are prlimit's options for a rootless bubblewrap run.
// Without a cgroup (noCgroup), memory is RLIMIT_DATA (each process's
// private writable memory, which is what a heap grows: address-space
// reservations such as Go's are not counted), processes are RLIMIT_NPROC
// and CPU time is RLIMIT_CPU: all per process, none a total over the run,
// as `toolwarden config check` says.
func rootlessRlimits(l Limits, noCgroup bool) []string {
	out := []string{"--nofile=" + strconv.FormatUint(l.NoFile, 10), "--fsize=" + strconv.FormatInt(l.FileSize, 10),
		"--as=" + strconv.FormatInt(l.AddressSpace, 10), "--core=0"}
	if noCgroup {
		out = append(out, "--data="+strconv.FormatInt(l.MemoryBytes, 10),
			"--nproc="+strconv.FormatUint(tasksNow.get()+l.NProc, 10),
			"--cpu="+strconv.FormatInt(cpuSeconds(l), 10))
	}
	return out
}

// cpuSeconds is the CPU time one process may use: what the configured
// quota allows over the whole timeout.
func cpuSeconds(l Limits) int64 {
	return int64(math.Ceil(l.Timeout.Seconds()*l.CPUs)) + 1
}

// taskCount caches userTasks for a second: scanning /proc costs a few
// milliseconds, and the count is an allowance, not an exact figure.
type taskCount struct {
	mu   sync.Mutex
	at   time.Time
	n    uint64
	scan func() uint64
}

var tasksNow = &taskCount{scan: userTasks}

func (c *taskCount) get() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.at) > time.Second {
		c.n, c.at = c.scan(), time.Now()
	}
	return c.n
}

// userTasks counts the threads the invoking user runs now. The kernel
// checks RLIMIT_NPROC against every task of the user's real uid, not only
// the sandbox's, so the sandbox's allowance is added to them: without this,
// a user whose editor runs 600 threads could not fork at all, and with it
// the sandbox still gets no more than l.NProc new tasks.
func userTasks() uint64 {
	uid := uint32(os.Getuid())
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var n uint64
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		var st syscall.Stat_t
		if syscall.Stat(dir, &st) != nil || st.Uid != uid {
			continue
		}
		n += threadsOf(dir)
	}
	return n
}

// threadsOf reads num_threads, field 20 of /proc/PID/stat (counted after
// the command name, which may hold spaces and parentheses).
func threadsOf(dir string) uint64 {
	data, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return 0
	}
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return 0
	}
	fields := bytes.Fields(data[end+1:])
	if len(fields) < 18 {
		return 0
	}
	n, err := strconv.ParseUint(string(fields[17]), 10, 64)
	if err != nil {
		return 0
	}
	return n
}
