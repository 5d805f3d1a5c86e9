package audit

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// captureLog returns a logger writing into the returned buffer.
func captureLog() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewTextHandler(&buf, nil)), &buf
}

func TestOpenSetsATornLastLineAside(t *testing.T) {
	_, lines := writeLog(t, 3)
	good := strings.Join(lines, "\n") + "\n"
	tests := []struct {
		name     string
		content  string
		wantTorn string // bytes moved aside; "" for none
		wantGood int    // whole lines kept before the torn line
	}{
		{name: "empty file", content: ""},
		{name: "valid log", content: good, wantGood: 3},
		{name: "last line without its newline", content: strings.TrimSuffix(good, "\n"),
			wantTorn: lines[2], wantGood: 2},
		{name: "half-written last line", content: good + lines[0][:20], wantTorn: lines[0][:20], wantGood: 3},
		{name: "garbage last line", content: good + "garbage\n", wantTorn: "garbage\n", wantGood: 3},
		{name: "zeros after a power loss", content: good + strings.Repeat("\x00", 5000),
			wantTorn: strings.Repeat("\x00", 5000), wantGood: 3},
		{name: "last line longer than the tail window", content: good + strings.Repeat("x", 9000) + "\n",
			wantTorn: strings.Repeat("x", 9000) + "\n", wantGood: 3},
		{name: "last line longer than any entry", content: good + strings.Repeat("x", maxLine+1),
			wantTorn: strings.Repeat("x", maxLine+1), wantGood: 3},
		{name: "nothing but a torn line", content: "not json at all", wantTorn: "not json at all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			log, logged := captureLog()
			a, err := OpenWith(path, Options{Log: log})
			require.NoError(t, err)
			require.NoError(t, a.Append(testEntry(9)))
			require.NoError(t, a.Close())

			got := readLines(t, path)
			res, err := verifyLines(got)
			require.NoError(t, err, "the chain goes on across the torn line")
			torn, err := os.ReadFile(path + ".torn")
			if tt.wantTorn == "" {
				require.ErrorIs(t, err, os.ErrNotExist)
				require.Empty(t, logged.String())
				require.Len(t, got, tt.wantGood+1)
				require.Empty(t, res.Torn)
				return
			}
			require.NoError(t, err)
			wantFile := tt.wantTorn
			if !strings.HasSuffix(wantFile, "\n") {
				wantFile += "\n"
			}
			require.Equal(t, wantFile, string(torn), "the torn bytes are kept, ending in a newline")
			require.Equal(t, lines[:tt.wantGood], got[:tt.wantGood], "the whole lines are untouched")
			require.Len(t, got, tt.wantGood+2, "whole lines, the torn-tail record, the new line")
			note := decodeEntry(t, got[tt.wantGood])
			require.Equal(t, OutcomeTornTail, note.Outcome)
			require.Equal(t, int64(len(tt.wantTorn)), note.TornBytes)
			require.Equal(t, "audit.jsonl.torn", note.TornFile)
			require.Equal(t, []TornRecord{{Line: tt.wantGood + 1, Seq: uint64(tt.wantGood + 1),
				Bytes: int64(len(tt.wantTorn)), File: "audit.jsonl.torn"}}, res.Torn)
			require.Contains(t, logged.String(), "torn last line set aside")
		})
	}
}

func TestTornLinesAccumulateInTheTornFile(t *testing.T) {
	path, _ := writeLog(t, 2)
	for _, junk := range []string{"first", "second"} {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = f.WriteString(junk)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		a, err := OpenWith(path, Options{Log: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		require.NoError(t, a.Close())
	}
	torn, err := os.ReadFile(path + ".torn")
	require.NoError(t, err)
	require.Equal(t, "first\nsecond\n", string(torn))
	res, err := verifyLines(readLines(t, path))
	require.NoError(t, err)
	require.Len(t, res.Torn, 2)
}

func TestOpenRefusesDamageBeyondTheLastLine(t *testing.T) {
	_, lines := writeLog(t, 3)
	content := strings.Join(lines, "\n") + "\ngarbage\nmore garbage\n"
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	_, err := Open(path)
	require.Error(t, err)
	require.Contains(t, err.Error(), path)
	require.Contains(t, err.Error(), "the line before it is no audit entry either")
	require.Contains(t, err.Error(), "audit verify")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, content, string(after), "a damaged log is left as it is")
	require.NoFileExists(t, path+".torn")
}

// TestAppendSetsAsideATornLineOfAnotherProcess: a process sharing the file
// died in the middle of a write; the next append of a live one repairs it.
func TestAppendSetsAsideATornLineOfAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenWith(path, Options{Log: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer a.Close()
	require.NoError(t, a.Append(testEntry(0)))
	other, err := openWriterLock(path) // the other process, writing under the lock as toolwarden does
	require.NoError(t, err)
	require.NoError(t, other.acquire())
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"seq":2,"time":"2026`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, other.close()) // it dies: the kernel drops its lock

	require.NoError(t, a.Append(testEntry(1)))
	res, err := verifyLines(readLines(t, path))
	require.NoError(t, err)
	require.Equal(t, 3, res.Lines)
	require.Len(t, res.Torn, 1)
}
