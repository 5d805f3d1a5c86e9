package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// OutcomeRotated marks the first line of a file started by rotation.
const OutcomeRotated Outcome = "rotated"

// rotateStamp names a rotated file: path.<UTC time>, sorting as text in
// time order.
const rotateStamp = "20060102T150405.000000000Z"

// rotateTmp names the new file of a rotation before it is renamed in place.
const rotateTmp = ".rotate-"

var rotatedSuffix = regexp.MustCompile(`^\.\d{8}T\d{6}\.\d{9}Z$`)

// rotationDue reports whether the file has reached MaxBytes or MaxAge.
// An empty file is never rotated.
func (a *Log) rotationDue(last *Entry, size int64) bool {
	switch {
	case last == nil:
		return false
	case a.opts.MaxBytes > 0 && size >= a.opts.MaxBytes:
		return true
	case a.opts.MaxAge > 0:
		born := a.firstTime()
		return !born.IsZero() && a.now().Sub(born) >= a.opts.MaxAge
	}
	return false
}

// rotate renames the full file to path.<UTC time> and starts a new one
// whose first line names it and chains to last. The new file is written
// aside first and renamed over path after the old one is linked to its
// new name, so path always names a whole file for other processes; those
// that take the writer lock next see their open file is not path any more
// and reopen. The writer lock is held.
func (a *Log) rotate(last *Entry) error {
	now := a.now().UTC()
	old := a.path + "." + now.Format(rotateStamp)
	first := Entry{Seq: last.Seq + 1, Time: now.Format(time.RFC3339Nano), Session: "-", Tool: "-", ArgsSHA256: "-",
		Rule: "audit.rotate", Outcome: OutcomeRotated, Prev: last.Hash, PrevFile: filepath.Base(old), Replica: a.opts.Replica}
	first.Hash = hashEntry(first)
	line, err := json.Marshal(first)
	if err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s%s%d", a.path, rotateTmp, os.Getpid())
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if err := a.install(f, tmp, old, append(line, '\n')); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	a.replace(f)
	if a.opts.Ship != nil {
		a.opts.Ship.Ship(line, first.Seq, first.Hash)
	}
	a.prune()
	return nil
}

// install writes the new file's first line and puts it in place.
func (a *Log) install(f *os.File, tmp, old string, line []byte) error {
	if _, err := f.Write(line); err != nil {
		return err
	}
	if a.opts.Sync != SyncNone {
		if err := errors.Join(a.f.Sync(), f.Sync()); err != nil {
			return err
		}
	}
	if err := os.Link(a.path, old); err != nil {
		return err
	}
	if err := os.Rename(tmp, a.path); err != nil {
		os.Remove(old)
		return err
	}
	if a.opts.Sync != SyncNone {
		return syncDir(filepath.Dir(a.path))
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// prune removes the oldest rotated files beyond Keep. A failure is logged,
// not returned: the call that rotated is audited either way.
func (a *Log) prune() {
	if a.opts.Keep <= 0 {
		return
	}
	files, err := RotatedFiles(a.path)
	if err != nil {
		a.opts.Log.Warn("audit log: listing rotated files failed", "file", a.path, "err", err)
		return
	}
	for _, p := range files[:max(len(files)-a.opts.Keep, 0)] {
		if err := os.Remove(p); err != nil {
			a.opts.Log.Warn("audit log: removing an old rotated file failed", "file", p, "err", err)
		}
	}
}

// RotatedFiles lists the files path was rotated to, oldest first.
func RotatedFiles(path string) ([]string, error) {
	return siblings(path, func(suffix string) bool { return rotatedSuffix.MatchString(suffix) })
}

// removeStaleRotations removes the new files of rotations that crashed
// before renaming them into place. It runs under the lock, when no
// rotation can be under way.
func removeStaleRotations(path string) {
	stale, _ := siblings(path, func(suffix string) bool { return strings.HasPrefix(suffix, rotateTmp) })
	for _, p := range stale {
		os.Remove(p)
	}
}

// siblings lists, sorted, the files beside path named path plus a suffix
// that match accepts.
func siblings(path string, match func(suffix string) bool) ([]string, error) {
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(filepath.Clean(dir))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if suffix, ok := strings.CutPrefix(e.Name(), base); ok && e.Type().IsRegular() && match(suffix) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(out)
	return out, nil
}
