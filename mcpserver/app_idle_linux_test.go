package mcpserver

import (
	"os"
	"testing"
)

// canary is written before the release and read after it: the binary's
// writable pages (data, bss) are never dropped.
var canary = []byte("written at start-up")

// TestReleaseBinaryPagesDropsCleanOnly: after the release the process
// maps far fewer of its executable's read-only pages (code and tables
// that start-up touched: they stay in the page cache, shared), code
// still runs, and what the process wrote to its data survives.
func TestReleaseBinaryPagesDropsCleanOnly(t *testing.T) {
	canary[0] = 'W'
	before := binaryRss(t)
	if before.readOnly < 1<<20 {
		t.Fatalf("the test binary maps only %d bytes of its read-only segments: nothing to measure", before.readOnly)
	}
	n, err := releaseBinaryPages()
	if err != nil {
		t.Fatal(err)
	}
	after := binaryRss(t)
	t.Logf("read-only segments resident: %d KB -> %d KB (%d mappings released); writable: %d KB -> %d KB",
		before.readOnly>>10, after.readOnly>>10, n, before.writable>>10, after.writable>>10)
	if n == 0 || after.readOnly > before.readOnly/2 {
		t.Fatalf("read-only segments resident %d -> %d bytes, %d mappings released: want less than half", before.readOnly, after.readOnly, n)
	}
	if string(canary) != "Written at start-up" {
		t.Fatalf("the data segment lost a write: %q", canary)
	}
	if after.writable < before.writable/2 {
		t.Fatalf("writable segments resident %d -> %d bytes: they must be kept", before.writable, after.writable)
	}
}

type segmentsRss struct{ readOnly, writable int64 }

// binaryRss sums the resident bytes of this executable's mappings.
func binaryRss(t *testing.T) segmentsRss {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	maps, err := executableMappings(exe)
	if err != nil {
		t.Fatal(err)
	}
	var s segmentsRss
	for _, m := range maps {
		if m.writable {
			s.writable += m.rss
		} else {
			s.readOnly += m.rss
		}
	}
	return s
}

// TestReleasableMappings: only clean read-only mappings are released; a
// read-only mapping the process wrote to (a relocated RELRO page, a
// debugger's breakpoint in the code) would lose the write.
func TestReleasableMappings(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    mapping
		want bool
	}{
		{"code, clean", mapping{rss: 14 << 20}, true},
		{"code with a breakpoint written", mapping{rss: 14 << 20, own: 4 << 10}, false},
		{"data", mapping{writable: true, rss: 740 << 10}, false},
		{"nothing resident", mapping{}, false},
	} {
		if got := tc.m.releasable(); got != tc.want {
			t.Errorf("%s: releasable %v, want %v", tc.name, got, tc.want)
		}
	}
}
