package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// nullNetns is the file in runsc's --root on which runsc, run as root with
// --network=none, bind-mounts the empty network namespace its sandboxes
// share. runsc never removes it, so without help it outlives the server
// as an nsfs mount in the state directory.
const nullNetns = "null-netns"

// maxStackedMounts bounds the unmount loop: each mount on the same file
// is one more unmount, and a file nobody mounts twice needs one.
const maxStackedMounts = 16

// removeNetnsMount detaches every mount on p and removes the file. Lazy
// unmounting (MNT_DETACH) lets a namespace still in use by a process live
// on; it is freed when the last user goes. Symlinks at p are not followed.
func removeNetnsMount(p string) error {
	for range maxStackedMounts {
		err := detachMount(p)
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
			break // no longer a mount point, or no file at all
		}
		if err != nil {
			return fmt.Errorf("unmount %s: %w", p, err)
		}
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// errBusy is lockNetns's answer when a run holds the lock.
var errBusy = errors.New("a sandbox run is under way")

// lockNetns takes the state directory's netns lock: shared for a run,
// which waits only while another server removes the namespace, and
// exclusive without waiting for removing it, which fails with errBusy
// while any run holds it. The returned function releases it.
func lockNetns(stateDir string, exclusive bool) (func(), error) {
	f, err := os.OpenFile(filepath.Join(stateDir, "netns.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX | unix.LOCK_NB
	}
	if err := unix.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, errBusy
		}
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return func() { f.Close() }, nil
}
