package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// SmallVolume mounts a tmpfs of size (as mount's size= takes it, "64k")
// on a new temporary directory, unmounted when the test ends, so that a
// test can fill a disk without filling the machine's. It needs root.
func SmallVolume(t testing.TB, size string) string {
	t.Helper()
	Root(t)
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Fatalf("mounting a %s tmpfs: %v", size, err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// Fill writes the file dir/filler until the volume is full and returns
// its path; removing it frees the space again.
func Fill(t testing.TB, dir string) string {
	t.Helper()
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 512)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v", dir, err)
			}
			return filler
		}
	}
}
