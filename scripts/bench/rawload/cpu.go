package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// cpuMeter is a conn whose server's CPU time can be read: a stdio child.
type cpuMeter interface {
	cpuTime() (time.Duration, bool)
}

// clockTick is USER_HZ, the unit of /proc/PID/stat's times (100 on every
// Linux this runs on).
const clockTick = 10 * time.Millisecond

// processCPU is the user plus system time pid and its threads have used,
// from /proc/PID/stat; false off Linux or once the process is gone.
func processCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces: fields count from after it.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * clockTick, true
}

// cpuPerCall measures the server CPU time a round of n calls cost, in
// microseconds per call; 0 when c cannot tell.
func cpuPerCall(c conn, n int, round func() error) (float64, error) {
	m, ok := c.(cpuMeter)
	before, okBefore := time.Duration(0), false
	if ok {
		before, okBefore = m.cpuTime()
	}
	if err := round(); err != nil || !okBefore {
		return 0, err
	}
	after, ok := m.cpuTime()
	if !ok || n == 0 {
		return 0, nil
	}
	return float64((after - before).Microseconds()) / float64(n), nil
}
