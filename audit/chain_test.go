package audit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// rotatedLog writes a log rotated into several files and returns the
// directory and its files, oldest first.
func rotatedLog(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	a := openRotating(t, path, Options{MaxBytes: 4096})
	for i := range 40 {
		require.NoError(t, a.Append(testEntry(i)))
	}
	require.NoError(t, a.Close())
	rotated, err := RotatedFiles(path)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(rotated), 3)
	return dir, append(rotated, path)
}

func TestVerifyFilesOrdersByTheChain(t *testing.T) {
	_, files := rotatedLog(t)
	shuffled := slices.Clone(files)
	slices.Reverse(shuffled)
	res, err := VerifyFiles(shuffled)
	require.NoError(t, err)
	var got []string
	for _, f := range res.Files {
		got = append(got, f.Path)
	}
	require.Equal(t, files, got)
	require.Equal(t, uint64(1), res.Files[0].FirstSeq)
	for i := 1; i < len(res.Files); i++ {
		require.Equal(t, filepath.Base(files[i-1]), res.Files[i].PrevFile)
		require.Equal(t, res.Files[i-1].LastSeq+1, res.Files[i].FirstSeq)
	}
}

func TestVerifyOfOneRotatedFile(t *testing.T) {
	_, files := rotatedLog(t)
	f, err := os.Open(files[1])
	require.NoError(t, err)
	defer f.Close()
	res, err := Verify(f)
	require.NoError(t, err, "a rotated file verifies on its own from its first line")
	require.Equal(t, filepath.Base(files[0]), res.PrevFile)
	require.Greater(t, res.FirstSeq, uint64(1))
}

func TestVerifyFilesDetectsTampering(t *testing.T) {
	tests := []struct {
		name    string
		tamper  func(t *testing.T, files []string) []string
		wantErr string
	}{
		{name: "a middle file removed", wantErr: "do not form one chain",
			tamper: func(t *testing.T, f []string) []string {
				require.NoError(t, os.Remove(f[1]))
				return append(f[:1:1], f[2:]...)
			}},
		{name: "last line of a rotated file cut", wantErr: "chain broken: prev does not match the last hash of",
			tamper: func(t *testing.T, f []string) []string {
				lines := readLines(t, f[1])
				writeLines(t, f[1], lines[:len(lines)-1])
				return f
			}},
		{name: "line edited in a rotated file", wantErr: "hash mismatch",
			tamper: func(t *testing.T, f []string) []string {
				lines := readLines(t, f[0])
				lines[2] = strings.Replace(lines[2], `"outcome":"allowed"`, `"outcome":"denied"`, 1)
				writeLines(t, f[0], lines)
				return f
			}},
		{name: "rotation line moved inside a file", wantErr: "a rotation line must be a file's first line",
			tamper: func(t *testing.T, f []string) []string {
				prev, cur := readLines(t, f[1]), readLines(t, f[2])
				writeLines(t, f[1], append(prev, cur...))
				require.NoError(t, os.Remove(f[2]))
				return append(f[:2:2], f[3:]...)
			}},
		{name: "a file of another log", wantErr: "do not form one chain",
			tamper: func(t *testing.T, f []string) []string {
				other, _ := writeLog(t, 2)
				renamed := filepath.Join(filepath.Dir(other), "other.jsonl")
				require.NoError(t, os.Rename(other, renamed))
				return append(f, renamed)
			}},
		{name: "two files with one name", wantErr: "two files are named",
			tamper: func(t *testing.T, f []string) []string {
				dup := filepath.Join(t.TempDir(), filepath.Base(f[0]))
				data, err := os.ReadFile(f[0])
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(dup, data, 0o600))
				return append(f, dup)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, files := rotatedLog(t)
			_, err := VerifyFiles(files)
			require.NoError(t, err, "the untouched files verify")
			_, err = VerifyFiles(tt.tamper(t, files))
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func TestLogFilesSkipsTornAndHalfMadeFiles(t *testing.T) {
	dir, files := rotatedLog(t)
	path := files[len(files)-1]
	for _, extra := range []string{path + tornSuffix, path + rotateTmp + "7", filepath.Join(dir, ".hidden")} {
		require.NoError(t, os.WriteFile(extra, []byte("x\n"), 0o600))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o700))
	got, err := LogFiles(dir)
	require.NoError(t, err)
	require.ElementsMatch(t, files, got)
	res, err := VerifyFiles(got)
	require.NoError(t, err)
	require.Equal(t, []TornFile{{Path: path + tornSuffix, Bytes: 2}}, res.TornFiles)

	_, err = LogFiles(t.TempDir())
	require.ErrorContains(t, err, "no audit files in it")
}

func writeLines(t *testing.T, path string, lines []string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
}

// replicaLog writes a log of replica r rotated into several files.
func replicaLog(t *testing.T, r string) []string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	a := openRotating(t, path, Options{MaxBytes: 4096, Replica: r})
	for i := range 30 {
		require.NoError(t, a.Append(testEntry(i)))
	}
	require.NoError(t, a.Close())
	files, err := LogFiles(dir)
	require.NoError(t, err)
	return files
}

// TestVerifyChainsOfSeveralReplicas: the files of two replicas (the same
// names in two directories) are two chains, each reported on its own; a
// cut in one does not hide that the other is whole.
func TestVerifyChainsOfSeveralReplicas(t *testing.T) {
	r1, r2 := replicaLog(t, "r1"), replicaLog(t, "r2")
	chains := VerifyChains(append(slices.Clone(r1), r2...))
	require.Len(t, chains, 2)
	for i, c := range chains {
		require.NoError(t, c.Err)
		require.Equal(t, []string{"r1", "r2"}[i], c.Replica)
		require.Len(t, c.Files, len([]([]string){r1, r2}[i]))
	}

	last := r2[len(r2)-1]
	lines := readLines(t, last)
	lines[1] = strings.Replace(lines[1], `"rule":"allowed"`, `"rule":"denied"`, 1)
	writeLines(t, last, lines)
	chains = VerifyChains(append(slices.Clone(r1), r2...))
	require.NoError(t, chains[0].Err)
	require.ErrorContains(t, chains[1].Err, "line 2: hash mismatch")
	require.Equal(t, "r2", chains[1].Replica)
}

// TestVerifyChainsStillRefusesAStrayFile: files of one replica (or of none
// named) must still form one chain.
func TestVerifyChainsStillRefusesAStrayFile(t *testing.T) {
	_, files := rotatedLog(t)
	other, _ := writeLog(t, 2)
	renamed := filepath.Join(filepath.Dir(other), "other.jsonl")
	require.NoError(t, os.Rename(other, renamed))
	chains := VerifyChains(append(files, renamed))
	require.Len(t, chains, 1)
	require.ErrorContains(t, chains[0].Err, "do not form one chain")
}
