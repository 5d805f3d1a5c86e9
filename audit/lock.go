package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// writerLock is the right to append to one audit file, shared by every
// process that writes it. It is an exclusive flock on a lock file beside
// the log (.<name>.lock, hidden, so audit verify of the directory skips
// it), which rotation never renames.
//
// A process keeps the lock between its appends (taking and dropping a
// flock around each line cost two of the append's six system calls), and
// gives it up as soon as another one wants it: a process about to wait for
// the flock counts itself in the lock file's first word, which every
// holder maps into memory and reads at each append and, while it holds
// the lock, every pollEvery from its latest append on. A holder idle for
// idleRelease lets go anyway.
//
// The count is a hint, the flock the guarantee: a process killed while
// waiting leaves the count raised, which only makes the holder give the
// lock up after each line, as before this lock existed. So does a file
// system that cannot map the lock file shared (unmapped): the count then
// reads as always raised.
type writerLock struct {
	f    *os.File
	fd   int
	mem  []byte
	want *uint32
	held bool
}

// lockSize is the lock file's size: one page, mapped shared.
const lockSize = 4096

// lockPath names the lock file of the log at path.
func lockPath(path string) string {
	dir, base := filepath.Split(path)
	return filepath.Join(dir, "."+base+".lock")
}

func openWriterLock(path string) (*writerLock, error) {
	f, err := os.OpenFile(lockPath(path), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	l, err := mapWriterLock(f)
	if err != nil {
		return unmapped(f), nil
	}
	return l, nil
}

// unmapped is the lock without the shared count: given up after each line.
func unmapped(f *os.File) *writerLock {
	raised := uint32(1)
	return &writerLock{f: f, fd: int(f.Fd()), want: &raised}
}

func mapWriterLock(f *os.File) (*writerLock, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() < lockSize {
		// Growing by truncate is safe when several processes race: each
		// sets the same size and the new bytes read as zero.
		if err := f.Truncate(lockSize); err != nil {
			return nil, err
		}
	}
	fd := int(f.Fd())
	mem, err := syscall.Mmap(fd, 0, lockSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	return &writerLock{f: f, fd: fd, mem: mem, want: (*uint32)(unsafe.Pointer(&mem[0]))}, nil
}

// acquire waits for the flock, counted among the waiters meanwhile.
func (l *writerLock) acquire() error {
	atomic.AddUint32(l.want, 1)
	err := syscall.Flock(l.fd, syscall.LOCK_EX)
	atomic.AddUint32(l.want, ^uint32(0))
	if err != nil {
		return fmt.Errorf("audit log lock: %w", err)
	}
	l.held = true
	return nil
}

// wanted reports whether another writer waits for the lock.
func (l *writerLock) wanted() bool { return atomic.LoadUint32(l.want) > 0 }

func (l *writerLock) release() {
	if l.held {
		_ = syscall.Flock(l.fd, syscall.LOCK_UN)
		l.held = false
	}
}

func (l *writerLock) close() error {
	l.release()
	var err error
	if l.mem != nil {
		err = syscall.Munmap(l.mem)
	}
	l.mem, l.want = nil, nil
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}
