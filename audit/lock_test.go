package audit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// helperLogEnv makes the test binary a second process appending to a log
// (TestAuditHelperProcess), as a second server sharing the file does.
const helperLogEnv = "TOOLWARDEN_TEST_AUDIT_HELPER"

func TestAuditHelperProcess(t *testing.T) {
	path := os.Getenv(helperLogEnv)
	if path == "" {
		t.Skip("runs as the second process of TestAuditTwoProcessesChainOneFile")
	}
	n, err := strconv.Atoi(os.Getenv(helperLogEnv + "_LINES"))
	require.NoError(t, err)
	a, err := OpenWith(path, Options{Sync: SyncNone, MaxBytes: 8192, Replica: "helper"})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path+".ready", nil, 0o600))
	for !fileExists(path + ".go") {
		time.Sleep(time.Millisecond)
	}
	for i := range n {
		require.NoError(t, a.Append(testEntry(i)))
	}
	require.NoError(t, a.Close())
}

// TestAuditTwoProcessesChainOneFile: two processes append to one file at
// once, rotating it; every line of both is in one unbroken chain. The
// writer lock moves between them (each keeps it while the other does not
// ask for it).
func TestAuditTwoProcessesChainOneFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	const lines = 2000
	cmd := exec.Command(os.Args[0], "-test.run=^TestAuditHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperLogEnv+"="+path, helperLogEnv+"_LINES="+strconv.Itoa(lines))
	out := make(chan error, 1)
	go func() {
		b, err := cmd.CombinedOutput()
		if err != nil {
			err = fmt.Errorf("%w: %s", err, b)
		}
		out <- err
	}()
	a := openRotating(t, path, Options{Sync: SyncNone, MaxBytes: 8192, Replica: "parent"})
	for !fileExists(path + ".ready") {
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, os.WriteFile(path+".go", nil, 0o600)) // both start at once
	for i := range lines {
		require.NoError(t, a.Append(testEntry(i)))
	}
	require.NoError(t, <-out)
	require.NoError(t, a.Close())

	require.NoError(t, os.Remove(path+".ready"))
	require.NoError(t, os.Remove(path+".go"))
	files, err := LogFiles(dir)
	require.NoError(t, err)
	res, err := VerifyFiles(files)
	require.NoError(t, err)
	require.Greater(t, len(res.Files), 2, "the file was rotated")
	require.Equal(t, 2*lines, entriesIn(t, res))
	byReplica := map[string]int{}
	for _, f := range files {
		for _, l := range readLines(t, f) {
			e := decodeEntry(t, l)
			require.NotEmpty(t, e.Replica, "every line names its replica")
			if e.Outcome != OutcomeRotated {
				byReplica[e.Replica]++
			}
		}
	}
	require.Equal(t, lines, byReplica["parent"])
	require.Equal(t, lines, byReplica["helper"])
}

// TestAuditIdleWriterLetsTheLockGo: a log that stops appending gives the
// writer lock up, so that a process that opens the file later need not
// wait for the first one's next line.
func TestAuditIdleWriterLetsTheLockGo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := openTestLog(t, path)
	require.NoError(t, a.Append(testEntry(0)))
	f, err := os.Open(lockPath(path))
	require.NoError(t, err)
	defer f.Close()
	require.ErrorIs(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB), syscall.EWOULDBLOCK,
		"the writer keeps its lock between lines")
	require.Eventually(t, func() bool {
		return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
	}, 10*time.Second, 10*time.Millisecond, "an idle writer lets its lock go")
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_UN))
	require.NoError(t, a.Append(testEntry(1)), "and takes it again at its next line")
}

// TestAuditLeakedWaiterCountOnlyCostsSpeed: a process killed while it
// waited for the lock leaves the waiter count raised; writers then give
// the lock up after every line, and the chain still holds.
func TestAuditLeakedWaiterCountOnlyCostsSpeed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, b := openTestLog(t, path), openTestLog(t, path)
	atomic.AddUint32(a.lk.want, 1)
	for i := range 20 {
		w := a
		if i%3 == 0 {
			w = b
		}
		require.NoError(t, w.Append(testEntry(i)))
		require.False(t, w.lk.held, "a raised count makes the writer let go after its line")
	}
	res, err := verifyLines(readLines(t, path))
	require.NoError(t, err)
	require.Equal(t, 20, res.Lines)
}

// TestAuditRenamedAwayFileIsLeft: a file renamed away by another tool
// (logrotate without copytruncate) is left once the path is checked again.
func TestAuditRenamedAwayFileIsLeft(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := openTestLog(t, path)
	require.NoError(t, a.Append(testEntry(0)))
	require.NoError(t, os.Rename(path, path+".1"))
	a.mu.Lock()
	a.checked = time.Time{} // as after pathCheckEvery
	a.mu.Unlock()
	require.NoError(t, a.Append(testEntry(1)))
	require.Len(t, readLines(t, path+".1"), 1)
	require.Len(t, readLines(t, path), 1, "the new file at path starts a new chain")
}

// TestAuditRemovedFileIsReplaced: a removed file is replaced by a new one
// once the path is checked again.
func TestAuditRemovedFileIsReplaced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := openTestLog(t, path)
	require.NoError(t, a.Append(testEntry(0)))
	require.NoError(t, os.Remove(path))
	a.mu.Lock()
	a.checked = time.Time{} // as after pathCheckEvery
	a.mu.Unlock()
	require.NoError(t, a.Append(testEntry(1)))
	lines := readLines(t, path)
	require.Len(t, lines, 1)
	require.Equal(t, uint64(1), decodeEntry(t, lines[0]).Seq)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestAuditLockWithoutASharedMapping: where the lock file cannot be mapped
// shared, the lock is given up after every line, and writers still chain.
func TestAuditLockWithoutASharedMapping(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, b := openTestLog(t, path), openTestLog(t, path)
	for _, w := range []*Log{a, b} {
		f, err := os.OpenFile(lockPath(path), os.O_RDWR, 0)
		require.NoError(t, err)
		w.mu.Lock()
		require.NoError(t, w.lk.close())
		w.lk = unmapped(f)
		w.mu.Unlock()
	}
	for i := range 10 {
		w := []*Log{a, b}[i%2]
		require.NoError(t, w.Append(testEntry(i)))
		require.False(t, w.lk.held)
	}
	res, err := verifyLines(readLines(t, path))
	require.NoError(t, err)
	require.Equal(t, 10, res.Lines)
}
