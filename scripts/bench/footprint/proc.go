package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// memory is one process's PSS, the part of it that is anonymous memory
// (heap, stacks: not the binary's pages, which processes of one binary
// share) and its RSS, in kB.
type memory struct{ pss, anon, rss int64 }

// readMemory reads /proc/PID/smaps_rollup.
func readMemory(pid int) (memory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return memory{}, err
	}
	var m memory
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "Pss:":
			m.pss = v
		case "Pss_Anon:":
			m.anon = v
		case "Rss:":
			m.rss = v
		}
	}
	return m, nil
}

// descendants lists every process below pid, from /proc/*/stat.
func descendants(pid int) []int {
	children := map[int][]int{}
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		end := bytes.LastIndexByte(b, ')')
		if end < 0 {
			continue
		}
		f := strings.Fields(string(b[end+1:]))
		if len(f) < 2 {
			continue
		}
		self, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		parent, _ := strconv.Atoi(f[1])
		children[parent] = append(children[parent], self)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}
