package audit

import (
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func openRotating(t *testing.T, path string, opts Options) *Log {
	t.Helper()
	opts.Log = slog.New(slog.DiscardHandler)
	a, err := OpenWith(path, opts)
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	return a
}

// entriesIn counts the lines of the chain that are not rotation lines.
func entriesIn(t *testing.T, res ChainResult) int {
	t.Helper()
	n := 0
	for i, f := range res.Files {
		n += f.Lines
		if i > 0 || f.PrevFile != "" {
			n-- // the rotation line
		}
	}
	return n
}

func TestRotationBySize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := openRotating(t, path, Options{MaxBytes: 4096})
	for i := range 40 {
		require.NoError(t, a.Append(testEntry(i)))
	}
	rotated, err := RotatedFiles(path)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(rotated), 3)
	for _, p := range rotated {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		require.Less(t, fi.Size(), int64(4096+maxLine), "a file stops growing once it reaches max_bytes")
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	}

	lines := readLines(t, path)
	first := decodeEntry(t, lines[0])
	require.Equal(t, OutcomeRotated, first.Outcome)
	require.Equal(t, filepath.Base(rotated[len(rotated)-1]), first.PrevFile, "the first line names the previous file")
	prev := readLines(t, rotated[len(rotated)-1])
	require.Equal(t, decodeEntry(t, prev[len(prev)-1]).Hash, first.Prev, "and chains to its last hash")

	res, err := VerifyFiles(append(rotated, path))
	require.NoError(t, err)
	require.Empty(t, res.Missing)
	require.Equal(t, 40, entriesIn(t, res))
	require.Equal(t, path, res.Files[len(res.Files)-1].Path)
}

func TestRotationKeepsOnlyKeep(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	a := openRotating(t, path, Options{MaxBytes: 4096, Keep: 2})
	for i := range 60 {
		require.NoError(t, a.Append(testEntry(i)))
	}
	rotated, err := RotatedFiles(path)
	require.NoError(t, err)
	require.Len(t, rotated, 2)

	files, err := LogFiles(dir)
	require.NoError(t, err)
	require.Len(t, files, 3)
	res, err := VerifyFiles(files)
	require.NoError(t, err)
	require.NotEmpty(t, res.Missing, "the oldest kept file names one that was removed")
	require.NoFileExists(t, filepath.Join(dir, res.Missing))
}

func TestRotationByAge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := openRotating(t, path, Options{MaxAge: time.Hour})
	clock := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a.now = func() time.Time { return clock }
	require.NoError(t, a.Append(testEntry(0)))
	clock = clock.Add(59 * time.Minute)
	require.NoError(t, a.Append(testEntry(1)))
	rotated, err := RotatedFiles(path)
	require.NoError(t, err)
	require.Empty(t, rotated, "not an hour old yet")

	clock = clock.Add(time.Minute)
	require.NoError(t, a.Append(testEntry(2)))
	rotated, err = RotatedFiles(path)
	require.NoError(t, err)
	require.Equal(t, []string{path + ".20260301T130000.000000000Z"}, rotated)
	require.Len(t, readLines(t, rotated[0]), 2)
	require.Len(t, readLines(t, path), 2, "the rotation line and the new entry")
}

func TestRotationAgeSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	clock := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a := openRotating(t, path, Options{MaxAge: time.Hour})
	a.now = func() time.Time { return clock }
	require.NoError(t, a.Append(testEntry(0)))
	require.NoError(t, a.Close())

	// A new process measures the age from the file's first line.
	b := openRotating(t, path, Options{MaxAge: time.Hour})
	b.now = func() time.Time { return clock.Add(2 * time.Hour) }
	require.NoError(t, b.Append(testEntry(1)))
	rotated, err := RotatedFiles(path)
	require.NoError(t, err)
	require.Len(t, rotated, 1)
}

// TestRotationSharedByWriters: writers with their own open files (as
// separate processes have) rotate one file concurrently; no line is lost
// in a file renamed away, and the chain holds across the files.
func TestRotationSharedByWriters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	writers := []*Log{
		openRotating(t, path, Options{MaxBytes: 4096, Sync: SyncNone}),
		openRotating(t, path, Options{MaxBytes: 4096, Sync: SyncNone}),
		openRotating(t, path, Options{MaxBytes: 4096, Sync: SyncAlways}),
	}
	const perGoroutine = 40
	var wg sync.WaitGroup
	for _, w := range writers {
		for g := range 2 {
			wg.Go(func() {
				for i := range perGoroutine {
					if err := w.Append(testEntry(g*perGoroutine + i)); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	files, err := LogFiles(dir)
	require.NoError(t, err)
	require.Greater(t, len(files), 5)
	res, err := VerifyFiles(files)
	require.NoError(t, err)
	require.Equal(t, len(writers)*2*perGoroutine, entriesIn(t, res))
	require.NoFileExists(t, path+rotateTmp+"0")
}

func TestOpenRemovesACrashedRotation(t *testing.T) {
	path, _ := writeLog(t, 1)
	stale := path + rotateTmp + "4242"
	require.NoError(t, os.WriteFile(stale, []byte("{}\n"), 0o600))
	openTestLog(t, path)
	require.NoFileExists(t, stale)
}
