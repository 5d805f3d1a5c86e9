package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupRoot is where cgroup hierarchies are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// cgroupGroup is the directory, under the server's own cgroup, that holds
// one child cgroup per run; leftovers of a crash are found there.
const cgroupGroup = "toolwarden"

// v1Controllers are the cgroup v1 hierarchies a run is limited by.
var v1Controllers = []string{"memory", "pids", "cpu"}

// runCgroup is the cgroup of one run: one directory per controller on
// cgroup v1, a single directory on v2.
type runCgroup struct {
	id   string
	v2   bool
	dirs map[string]string // controller ("" on v2) → directory
}

// cgroupParents returns the directories under which run cgroups are
// created, one per controller ("" on v2), below the server's own cgroup so
// runs stay inside whatever limits the server itself runs under.
func cgroupParents() (bool, map[string]string, error) {
	own, err := ownCgroups()
	if err != nil {
		return false, nil, err
	}
	if _, err := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil {
		return true, map[string]string{"": filepath.Join(cgroupRoot, own[""], cgroupGroup)}, nil
	}
	parents := map[string]string{}
	for _, c := range v1Controllers {
		p, ok := own[c]
		if !ok {
			return false, nil, fmt.Errorf("cgroup v1 controller %q is not mounted", c)
		}
		parents[c] = filepath.Join(cgroupRoot, c, p, cgroupGroup)
	}
	return false, parents, nil
}

// ownCgroups parses /proc/self/cgroup: controller → path.
func ownCgroups() (map[string]string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, sc.Err()
}

// newRunCgroup creates the cgroup of run id with limits l.
func newRunCgroup(id string, l Limits) (*runCgroup, error) {
	v2, parents, err := cgroupParents()
	if err != nil {
		return nil, err
	}
	cg := &runCgroup{id: id, v2: v2, dirs: map[string]string{}}
	if v2 {
		if err := enableV2Controllers(parents[""]); err != nil {
			return nil, err
		}
	}
	for c, parent := range parents {
		dir := filepath.Join(parent, id)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			cg.remove()
			return nil, fmt.Errorf("create cgroup: %w", err)
		}
		cg.dirs[c] = dir
	}
	if err := cg.setLimits(l); err != nil {
		cg.remove()
		return nil, err
	}
	return cg, nil
}

// enableV2Controllers turns on the memory, pids and cpu controllers for the
// children of group.
func enableV2Controllers(group string) error {
	if err := os.MkdirAll(group, 0o755); err != nil {
		return fmt.Errorf("create cgroup: %w", err)
	}
	for _, dir := range []string{filepath.Dir(group), group} {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory +pids +cpu"), 0o644); err != nil {
			return fmt.Errorf("enable cgroup v2 controllers in %s: %w", dir, err)
		}
	}
	return nil
}

func (cg *runCgroup) setLimits(l Limits) error {
	period := int64(100000)
	quota := int64(l.CPUs * float64(period))
	var writes [][3]string // controller, file, value
	if cg.v2 {
		writes = [][3]string{
			{"", "memory.max", strconv.FormatInt(l.MemoryBytes, 10)},
			{"", "memory.swap.max", "0"},
			{"", "pids.max", strconv.FormatInt(l.Pids, 10)},
			{"", "cpu.max", fmt.Sprintf("%d %d", quota, period)},
		}
	} else {
		writes = [][3]string{
			{"memory", "memory.limit_in_bytes", strconv.FormatInt(l.MemoryBytes, 10)},
			{"pids", "pids.max", strconv.FormatInt(l.Pids, 10)},
			{"cpu", "cpu.cfs_period_us", strconv.FormatInt(period, 10)},
			{"cpu", "cpu.cfs_quota_us", strconv.FormatInt(quota, 10)},
		}
	}
	for _, w := range writes {
		if err := os.WriteFile(filepath.Join(cg.dirs[w[0]], w[1]), []byte(w[2]), 0o644); err != nil {
			if w[1] == "memory.swap.max" && errors.Is(err, os.ErrNotExist) {
				continue // no swap accounting: nothing to limit
			}
			return fmt.Errorf("set cgroup limit %s: %w", w[1], err)
		}
	}
	return nil
}

// procsFiles are the files a process writes its PID to, to join the cgroup.
func (cg *runCgroup) procsFiles() []string {
	var out []string
	for _, d := range cg.dirs {
		out = append(out, filepath.Join(d, "cgroup.procs"))
	}
	return out
}

// hit reports which limit the cgroup enforced, if any: an OOM kill, or a
// refused fork.
func (cg *runCgroup) hit() string {
	mem, pids := "memory.events", "pids.events"
	memDir, pidsDir := cg.dirs[""], cg.dirs[""]
	if !cg.v2 {
		mem, memDir, pidsDir = "memory.oom_control", cg.dirs["memory"], cg.dirs["pids"]
	}
	if eventCount(filepath.Join(memDir, mem), "oom_kill") > 0 {
		return LimitMemory
	}
	if eventCount(filepath.Join(pidsDir, pids), "max") > 0 {
		return LimitPids
	}
	return ""
}

// eventCount reads "key N" from a cgroup events file.
func eventCount(file, key string) int64 {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == key {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// remove kills whatever is left in the cgroup and deletes it, also from
// the hierarchies the runtime added it to (runsc creates the run's cgroup
// in every v1 hierarchy and does not always remove it).
func (cg *runCgroup) remove() error {
	var errs []error
	for _, dir := range cg.dirs {
		errs = append(errs, removeCgroupDir(dir))
	}
	if !cg.v2 {
		for _, parent := range allV1Parents() {
			dir := filepath.Join(parent, cg.id)
			if _, err := os.Stat(dir); err == nil {
				errs = append(errs, removeCgroupDir(dir))
			}
		}
	}
	return errors.Join(errs...)
}

// allV1Parents returns the run-cgroup parent in every mounted v1 hierarchy.
func allV1Parents() []string {
	own, err := ownCgroups()
	if err != nil {
		return nil
	}
	entries, _ := os.ReadDir(cgroupRoot)
	var out []string
	for _, e := range entries {
		p, ok := own[e.Name()]
		if !ok {
			p, ok = own["name="+e.Name()]
		}
		if ok && e.IsDir() {
			out = append(out, filepath.Join(cgroupRoot, e.Name(), p, cgroupGroup))
		}
	}
	return out
}

// removeCgroupDir kills the processes in dir and removes it, retrying
// while the kernel finishes reaping them.
func removeCgroupDir(dir string) error {
	var err error
	for i := 0; i < 50; i++ {
		killCgroupProcs(dir)
		if err = syscall.Rmdir(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("remove cgroup %s: %w", dir, err)
}

func killCgroupProcs(dir string) {
	data, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// cleanupCgroups removes the run cgroups left by a crashed server.
func cleanupCgroups() error {
	v2, parents, err := cgroupParents()
	if err != nil {
		return err
	}
	// On v1, runsc may have left a run's cgroup in any hierarchy.
	all := allV1Parents()
	if v2 {
		all = []string{parents[""]}
	}
	var errs []error
	for _, parent := range all {
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			if e.IsDir() && isLeftover(e.Name()) {
				errs = append(errs, removeCgroupDir(filepath.Join(parent, e.Name())))
			}
		}
	}
	return errors.Join(errs...)
}
