package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// Timing of the writer lock (see writerLock). A toolwarden process writes
// only under the lock, so while this one holds it, its last line and the
// file size are known without a system call; when it takes the lock again
// it looks at the file (a rotation, a line or a torn line of another
// process). pathCheckEvery bounds how long lines keep going into a file
// that something else renamed away or removed (logrotate without
// copytruncate, rm) and how long a foreign change goes unseen; lines a
// foreign writer appended or cut meanwhile show as a break in the chain.
const (
	pollEvery      = 2 * time.Millisecond
	idleRelease    = 100 * time.Millisecond
	pathCheckEvery = time.Second
)

// hold makes sure this process holds the writer lock, giving it to a
// waiting process first, and that the open file is the one path names.
// mu is held.
func (a *Log) hold(now time.Time) error {
	if a.lk.held && a.lk.wanted() {
		a.lk.release()
	}
	if !a.lk.held {
		if err := a.lk.acquire(); err != nil {
			return err
		}
		a.active, a.checked = now, time.Time{}
		a.armPoll()
	}
	if now.Sub(a.checked) < pathCheckEvery {
		return nil
	}
	a.fresh = false
	same, err := a.current()
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	if !same {
		if err := a.reopen(); err != nil {
			return err
		}
	}
	a.checked = now
	return nil
}

// armPoll starts watching, while the lock is held, for a process that
// waits for it, and for this one going idle: pollEvery after the latest
// append, which each append checks itself (Log.append), so that a
// busy log's timer never fires (each firing woke a thread of an
// otherwise idle process: ~6% of a stdio call's CPU).
func (a *Log) armPoll() {
	if a.poll == nil {
		a.poll = time.AfterFunc(pollEvery, a.pollLock)
		return
	}
	a.poll.Reset(pollEvery)
}

func (a *Log) pollLock() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.lk.held || a.closed {
		return
	}
	if a.lk.wanted() || time.Since(a.active) >= idleRelease {
		a.lk.release()
		return
	}
	a.poll.Reset(pollEvery)
}

// current reports whether the open file is still the one path names.
func (a *Log) current() (bool, error) {
	pi, err := os.Stat(a.path)
	if errors.Is(err, fs.ErrNotExist) {
		a.opts.Log.Warn("audit log file was removed; starting a new one", "file", a.path)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	fi, err := a.f.Stat()
	if err != nil {
		return false, err
	}
	return os.SameFile(fi, pi), nil
}

// stat fstats the open file into a.st; a file that was removed (no link
// left) is replaced by a new one at path.
func (a *Log) stat() error {
	if err := syscall.Fstat(a.fd, &a.st); err != nil {
		return err
	}
	if a.st.Nlink > 0 {
		return nil
	}
	a.opts.Log.Warn("audit log file was removed; starting a new one", "file", a.path)
	if err := a.reopen(); err != nil {
		return err
	}
	return syscall.Fstat(a.fd, &a.st)
}

func (a *Log) reopen() error {
	f, err := openAuditFile(a.path)
	if err != nil {
		return fmt.Errorf("audit log reopen: %w", err)
	}
	a.replace(f)
	return nil
}

// replace makes f the file appended to. The old one is fsynced first
// (unless the mode is none), so every write counted so far is durable.
func (a *Log) replace(f *os.File) {
	a.swap.Lock()
	old := a.f
	a.f, a.fd = f, int(f.Fd())
	a.swap.Unlock()
	if a.opts.Sync != SyncNone {
		if err := old.Sync(); err != nil {
			a.opts.Log.Warn("audit log: fsync of the previous file failed", "file", a.path, "err", err)
		} else {
			a.sync.markSynced()
		}
	}
	old.Close()
	a.last, a.size, a.born = nil, 0, time.Time{}
}

// fsync flushes the current file; the syncer calls it outside mu.
func (a *Log) fsync() error {
	a.swap.RLock()
	defer a.swap.RUnlock()
	return a.f.Sync()
}

// lastEntry returns the newest entry and the file size, from memory while
// this process held the writer lock since it last looked (fresh), or when
// the file has not changed since it last wrote to it. A torn last line is
// set aside first; the writer lock is held.
func (a *Log) lastEntry() (*Entry, int64, error) {
	if a.fresh && a.last != nil {
		return a.last, a.size, nil
	}
	if err := a.stat(); err != nil {
		return nil, 0, err
	}
	size := int64(a.st.Size)
	a.fresh = true
	if a.last != nil && size == a.size {
		return a.last, a.size, nil
	}
	last, err := readLast(a.f, size)
	if torn := (*tornTail)(nil); errors.As(err, &torn) {
		return a.setAside(torn)
	}
	if err != nil {
		return nil, 0, err
	}
	a.last, a.size = last, size
	return last, size, nil
}

// maxLine bounds an audit line; entries are about 400 bytes.
const maxLine = 64 << 10

// tornTail is a last line, [off, size), that is not a whole entry.
type tornTail struct {
	off, size int64
	why       string
}

func (t *tornTail) Error() string {
	return fmt.Sprintf("last line (%d bytes at offset %d) %s", t.size-t.off, t.off, t.why)
}

// readLast returns the entry on the last line of the file's first size
// bytes, nil for none, or a *tornTail.
func readLast(f *os.File, size int64) (*Entry, error) {
	if size == 0 {
		return nil, nil
	}
	off, err := lastLineStart(f, size)
	if err != nil {
		return nil, err
	}
	if size-off > maxLine {
		return nil, &tornTail{off, size, "is longer than any audit entry"}
	}
	line := make([]byte, size-off)
	if _, err := f.ReadAt(line, off); err != nil {
		return nil, err
	}
	if !bytes.HasSuffix(line, []byte("\n")) {
		return nil, &tornTail{off, size, "has no newline at its end"}
	}
	var e Entry
	if err := json.Unmarshal(line, &e); err != nil || e.Hash == "" {
		return nil, &tornTail{off, size, "is not an audit entry"}
	}
	return &e, nil
}

// lastLineStart returns the offset of the last line of the first size
// bytes: after the last newline that is not the final byte.
func lastLineStart(f *os.File, size int64) (int64, error) {
	buf := make([]byte, 8192)
	for pos := size; pos > 0; {
		n := min(pos, int64(len(buf)))
		chunk := buf[:n]
		if _, err := f.ReadAt(chunk, pos-n); err != nil {
			return 0, err
		}
		if pos == size && chunk[n-1] == '\n' {
			chunk = chunk[:n-1]
		}
		pos -= n
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			return pos + int64(i) + 1, nil
		}
	}
	return 0, nil
}

// firstTime is the time of the file's first line (zero when unknown), the
// age MaxAge is measured from.
func (a *Log) firstTime() time.Time {
	if !a.born.IsZero() {
		return a.born
	}
	buf := make([]byte, maxLine)
	n, _ := a.f.ReadAt(buf, 0)
	line, _, _ := bytes.Cut(buf[:n], []byte("\n"))
	var e Entry
	if json.Unmarshal(line, &e) == nil {
		a.born, _ = time.Parse(time.RFC3339Nano, e.Time)
	}
	return a.born
}
