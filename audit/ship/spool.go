package ship

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// spool is a queue of audit lines on disk, between the log and a sink
// that may be down: Ship appends each line to the newest segment file,
// the sender reads batches from a cursor and moves the cursor on once the
// sink took them. The cursor is a file too, so a restart goes on where the
// sink left off, and lines queued when the server stopped are sent by the
// next start. A segment wholly sent is removed.
//
// Delivery is at least once: a crash between a sink's acceptance and the
// cursor's write sends that batch again (each line has its seq and hash,
// by which a sink tells a repeat).
type spool struct {
	dir      string
	segBytes int64
	maxBytes int64

	lock *os.File // flocked while this process owns the spool

	mu    sync.Mutex
	w     *os.File // the newest segment, appended to
	wID   uint64
	wSize int64
	total int64 // bytes in all segments, sent or not
	read  cursor
}

// cursor is where the next unsent line starts: a segment and an offset.
type cursor struct {
	seg uint64
	off int64
}

// defaultSegBytes is the size at which a new segment starts, so that what
// was sent is given back to the disk in steps of this much.
const defaultSegBytes = 4 << 20

const (
	segSuffix  = ".seg"
	cursorFile = "cursor"
)

// openSpool opens the spool in dir (creating it, mode 0700), cutting a
// torn last line a crash left in the newest segment.
func openSpool(dir string, maxBytes int64) (*spool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("audit spool: %w", err)
	}
	s := &spool{dir: dir, segBytes: defaultSegBytes, maxBytes: maxBytes}
	if err := s.takeLock(); err != nil {
		return nil, err
	}
	ids, err := s.segments()
	if err != nil {
		s.lock.Close()
		return nil, err
	}
	if len(ids) == 0 {
		ids = []uint64{1}
	}
	for _, id := range ids[:len(ids)-1] {
		fi, err := os.Stat(s.segPath(id))
		if err != nil {
			return nil, fmt.Errorf("audit spool: %w", err)
		}
		s.total += fi.Size()
	}
	if err := s.openWriter(ids[len(ids)-1]); err != nil {
		s.lock.Close()
		return nil, err
	}
	s.read = s.loadCursor(ids)
	for _, id := range ids {
		if id < s.read.seg { // sent, left by a crash before its removal
			if err := s.removeSegment(id); err != nil {
				s.close()
				return nil, err
			}
		}
	}
	return s, nil
}

// takeLock makes this process the spool's only user: two senders on one
// cursor would send lines twice and move it past lines neither sent.
func (s *spool) takeLock() error {
	f, err := os.OpenFile(filepath.Join(s.dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("audit spool: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("the spool %s is in use by another toolwarden process: give each process that ships its own audit.ship.spool", s.dir)
		}
		return fmt.Errorf("audit spool: locking %s: %w", s.dir, err)
	}
	s.lock = f
	return nil
}

// segments lists the segment IDs in dir, oldest first.
func (s *spool) segments() ([]uint64, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("audit spool: %w", err)
	}
	var ids []uint64
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), segSuffix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if id, err := strconv.ParseUint(name, 16, 64); err == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

func (s *spool) segPath(id uint64) string {
	return filepath.Join(s.dir, fmt.Sprintf("%016x%s", id, segSuffix))
}

// openWriter opens segment id for appending, cut back to its last whole
// line.
func (s *spool) openWriter(id uint64) error {
	f, err := os.OpenFile(s.segPath(id), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("audit spool: %w", err)
	}
	size, err := wholeLines(f)
	if err != nil {
		f.Close()
		return fmt.Errorf("audit spool: %s: %w", f.Name(), err)
	}
	s.w, s.wID, s.wSize = f, id, size
	s.total += size
	return nil
}

// wholeLines cuts f after its last newline and returns its size.
func wholeLines(f *os.File) (int64, error) {
	b, err := io.ReadAll(f)
	if err != nil {
		return 0, err
	}
	keep := int64(bytes.LastIndexByte(b, '\n') + 1)
	if keep < int64(len(b)) {
		if err := f.Truncate(keep); err != nil {
			return 0, err
		}
	}
	return keep, nil
}

// loadCursor reads the cursor file; a missing or unreadable one, or one
// naming a segment that is gone, starts at the oldest segment.
func (s *spool) loadCursor(ids []uint64) cursor {
	first := cursor{seg: ids[0]}
	b, err := os.ReadFile(filepath.Join(s.dir, cursorFile))
	if err != nil {
		return first
	}
	var c cursor
	if _, err := fmt.Sscanf(string(b), "%x %d", &c.seg, &c.off); err != nil || !slices.Contains(ids, c.seg) || c.off < 0 {
		return first
	}
	return c
}

// add appends line (ending in a newline) to the spool. It reports false,
// writing nothing, when the spool holds maxBytes already.
func (s *spool) add(line []byte) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.total+int64(len(line)) > s.maxBytes {
		return false, nil
	}
	if s.wSize >= s.segBytes {
		if err := s.w.Close(); err != nil {
			return false, fmt.Errorf("audit spool: %w", err)
		}
		if err := s.openWriter(s.wID + 1); err != nil {
			return false, err
		}
	}
	n, err := s.w.Write(line)
	s.wSize += int64(n)
	s.total += int64(n)
	if err != nil {
		return false, fmt.Errorf("audit spool: %w", err)
	}
	return true, nil
}

// next reads up to maxLines whole lines, and at most about maxBytes, from
// the cursor on, with the cursor after them. A segment read to its end
// while a newer one exists is passed over.
func (s *spool) next(maxLines int, maxBytes int) ([][]byte, cursor, error) {
	s.mu.Lock()
	at, newest := s.read, s.wID
	s.mu.Unlock()
	for {
		lines, end, err := readLines(s.segPath(at.seg), at.off, maxLines, maxBytes)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, at, err
		}
		if len(lines) > 0 || at.seg >= newest {
			return lines, cursor{seg: at.seg, off: end}, nil
		}
		at = cursor{seg: at.seg + 1}
	}
}

// readLines reads whole lines of path from off.
func readLines(path string, off int64, maxLines, maxBytes int) ([][]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, off, err
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, off, err
	}
	r := bufio.NewReaderSize(f, 64<<10)
	var lines [][]byte
	size := 0
	for len(lines) < maxLines && size < maxBytes {
		line, err := r.ReadBytes('\n')
		if err != nil { // EOF, or a line still being written
			break
		}
		lines = append(lines, line)
		size += len(line)
		off += int64(len(line))
	}
	return lines, off, nil
}

// commit moves the cursor to c, once the sink took what was before it,
// and removes the segments wholly before it.
func (s *spool) commit(c cursor) error {
	tmp := filepath.Join(s.dir, cursorFile+".tmp")
	if err := os.WriteFile(tmp, fmt.Appendf(nil, "%x %d\n", c.seg, c.off), 0o600); err != nil {
		return fmt.Errorf("audit spool: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, cursorFile)); err != nil {
		return fmt.Errorf("audit spool: %w", err)
	}
	s.mu.Lock()
	old := s.read.seg
	s.read = c
	s.mu.Unlock()
	for id := old; id < c.seg; id++ {
		if err := s.removeSegment(id); err != nil {
			return err
		}
	}
	return nil
}

// removeSegment removes a segment wholly sent.
func (s *spool) removeSegment(id uint64) error {
	fi, err := os.Stat(s.segPath(id))
	if err != nil {
		return nil // gone already
	}
	if err := os.Remove(s.segPath(id)); err != nil {
		return fmt.Errorf("audit spool: %w", err)
	}
	s.mu.Lock()
	s.total -= fi.Size()
	s.mu.Unlock()
	return nil
}

// pending is how many bytes are queued: written and not yet committed.
func (s *spool) pending() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.read.seg == s.wID {
		return s.wSize - s.read.off
	}
	return s.total - s.read.off
}

func (s *spool) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.w.Close()
	s.lock.Close() // and with it the flock
	return err
}
