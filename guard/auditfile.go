package guard

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

// lock takes the exclusive flock of the file path names. A process that
// waited for the lock while another rotated the file holds the renamed-away
// file: it reopens path and locks again, so that no line lands behind a
// rotation. flock is not fair, so a writer may find the file rotated again
// while it waited; the bound only stops a loop nothing could end.
func (a *AuditLog) lock() error {
	for range 1000 {
		if err := syscall.Flock(int(a.f.Fd()), syscall.LOCK_EX); err != nil {
			return fmt.Errorf("audit log lock: %w", err)
		}
		same, err := a.current()
		if err != nil {
			a.unlock()
			return fmt.Errorf("audit log: %w", err)
		}
		if same {
			return nil
		}
		a.unlock()
		if err := a.reopen(); err != nil {
			return err
		}
	}
	return errors.New("audit log: the file keeps being replaced under the lock")
}

func (a *AuditLog) unlock() { _ = syscall.Flock(int(a.f.Fd()), syscall.LOCK_UN) }

// current reports whether the open file is still the one path names.
func (a *AuditLog) current() (bool, error) {
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

func (a *AuditLog) reopen() error {
	f, err := openAuditFile(a.path)
	if err != nil {
		return fmt.Errorf("audit log reopen: %w", err)
	}
	a.replace(f)
	return nil
}

// replace makes f the file appended to. The old one is fsynced first
// (unless the mode is none), so every write counted so far is durable.
func (a *AuditLog) replace(f *os.File) {
	a.swap.Lock()
	old := a.f
	a.f = f
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
func (a *AuditLog) fsync() error {
	a.swap.RLock()
	defer a.swap.RUnlock()
	return a.f.Sync()
}

// lastEntry returns the newest entry and the file size, from memory when
// the file has not changed since this process last wrote to it. A torn
// last line is set aside first; the flock is held.
func (a *AuditLog) lastEntry() (*Entry, int64, error) {
	fi, err := a.f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if a.last != nil && fi.Size() == a.size {
		return a.last, a.size, nil
	}
	last, err := readLast(a.f, fi.Size())
	if torn := (*tornTail)(nil); errors.As(err, &torn) {
		return a.setAside(torn)
	}
	if err != nil {
		return nil, 0, err
	}
	a.last, a.size = last, fi.Size()
	return last, fi.Size(), nil
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
func (a *AuditLog) firstTime() time.Time {
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
