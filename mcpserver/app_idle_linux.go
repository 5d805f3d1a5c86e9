package mcpserver

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Start-up touches code and tables all over the binary: some 390 package
// inits, the type descriptors and the pc tables the first collections
// read. ~28 MB of the executable stay mapped in a serving process that
// then needs ~3 MB of it at idle (docs/benchmarks.md, "Idle footprint").
// At the idle release the process drops its clean read-only pages of the
// executable from its page tables (MADV_DONTNEED): they stay in the page
// cache, shared with every other instance of the binary, and the pages a
// later call runs are mapped again from there (minor faults, no I/O while
// the cache holds them). Writable mappings (data, bss) are never touched,
// nor any read-only mapping holding a page of the process's own (one the
// dynamic loader relocated, or a debugger's breakpoint): dropping those
// would lose what was written.

// mapping is one mapping of /proc/self/smaps.
type mapping struct {
	start, end uintptr
	writable   bool
	// rss is its resident bytes; own the bytes the process wrote, its
	// copies on write (Anonymous). Private_Dirty is no guide: it also
	// counts the file's own pages not yet written back, as a binary just
	// built has.
	rss, own int64
}

// executableMappings returns the mappings of the file exe, from
// /proc/self/smaps.
func executableMappings(exe string) ([]mapping, error) {
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return nil, err
	}
	var out []mapping
	var cur *mapping
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if !strings.HasSuffix(f[0], ":") { // a mapping's first line
			cur = nil
			if len(f) < 6 || strings.Join(f[5:], " ") != exe {
				continue
			}
			lo, hi, ok := strings.Cut(f[0], "-")
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			if !ok || err1 != nil || err2 != nil || len(f[1]) != 4 {
				return nil, fmt.Errorf("smaps: unreadable mapping line %q", sc.Text())
			}
			out = append(out, mapping{start: uintptr(start), end: uintptr(end), writable: f[1][1] == 'w'})
			cur = &out[len(out)-1]
			continue
		}
		if cur == nil || len(f) < 3 || f[2] != "kB" {
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("smaps: unreadable field %q", sc.Text())
		}
		switch f[0] {
		case "Rss:":
			cur.rss = kb << 10
		case "Anonymous:":
			cur.own = kb << 10
		}
	}
	return out, sc.Err()
}

// releasable reports whether dropping m's pages loses nothing: a
// read-only mapping with pages resident, none of them the process's own.
func (m mapping) releasable() bool { return !m.writable && m.own == 0 && m.rss > 0 }

// releaseBinaryPages drops the executable's clean read-only pages from
// the process's page tables and returns how many mappings it released.
func releaseBinaryPages() (int, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, err
	}
	maps, err := executableMappings(exe)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range maps {
		if !m.releasable() {
			continue
		}
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_DONTNEED); errno != 0 {
			return n, fmt.Errorf("madvise %#x-%#x: %w", m.start, m.end, errno)
		}
		n++
	}
	return n, nil
}
