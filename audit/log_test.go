package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func openTestLog(t *testing.T, path string) *Log {
	t.Helper()
	a, err := Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	return a
}

func testEntry(i int) Entry {
	return Entry{
		Session: fmt.Sprint("sess-", i%3), Tool: "read_file", ArgsSHA256: fmt.Sprintf("%064x", i),
		Rule: "allowed", Outcome: "allowed", DurationMS: float64(i) / 4,
	}
}

// writeLog appends n entries to a new log and returns its path and lines.
func writeLog(t *testing.T, n int) (string, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := openTestLog(t, path)
	for i := range n {
		require.NoError(t, a.Append(testEntry(i)))
	}
	return path, readLines(t, path)
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.HasSuffix(b, []byte("\n")), "every line ends in a newline")
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func verifyLines(lines []string) (VerifyResult, error) {
	return Verify(strings.NewReader(strings.Join(lines, "\n") + "\n"))
}

func decodeEntry(t *testing.T, line string) Entry {
	t.Helper()
	var e Entry
	require.NoError(t, json.Unmarshal([]byte(line), &e))
	return e
}

func encodeEntry(t *testing.T, e Entry) string {
	t.Helper()
	b, err := json.Marshal(e)
	require.NoError(t, err)
	return string(b)
}

func TestAuditAppendAndVerify(t *testing.T) {
	path, lines := writeLog(t, 7)
	require.Len(t, lines, 7)
	prev := genesis
	for i, l := range lines {
		e := decodeEntry(t, l)
		require.Equal(t, uint64(i+1), e.Seq)
		require.Equal(t, prev, e.Prev)
		require.Equal(t, hashEntry(e), e.Hash)
		require.NotEmpty(t, e.Time)
		prev = e.Hash
	}

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	res, err := Verify(f)
	require.NoError(t, err)
	require.Equal(t, 7, res.Lines)
	require.Equal(t, prev, res.LastHash)
}

func TestVerifyEmptyLog(t *testing.T) {
	res, err := Verify(strings.NewReader(""))
	require.NoError(t, err)
	require.Equal(t, 0, res.Lines)
	require.Equal(t, genesis, res.LastHash)
}

func TestVerifyDetectsTampering(t *testing.T) {
	tests := []struct {
		name    string
		tamper  func(t *testing.T, lines []string) []string
		wantErr string
	}{
		{name: "field edited in a middle line", wantErr: "line 3: hash mismatch",
			tamper: func(t *testing.T, l []string) []string {
				l[2] = strings.Replace(l[2], `"outcome":"allowed"`, `"outcome":"denied"`, 1)
				return l
			}},
		{name: "field edited and hash recomputed", wantErr: "line 4: chain broken",
			tamper: func(t *testing.T, l []string) []string {
				e := decodeEntry(t, l[2])
				e.Tool = "delete_file"
				e.Hash = hashEntry(e)
				l[2] = encodeEntry(t, e)
				return l
			}},
		{name: "session edited", wantErr: "line 2: hash mismatch",
			tamper: func(t *testing.T, l []string) []string {
				l[1] = strings.Replace(l[1], `"session":"sess-1"`, `"session":"sess-X"`, 1)
				return l
			}},
		{name: "middle line deleted", wantErr: "line 3: sequence number is 4, want 3",
			tamper: func(t *testing.T, l []string) []string { return append(l[:2:2], l[3:]...) }},
		{name: "first line deleted", wantErr: "line 1: sequence number is 2",
			tamper: func(t *testing.T, l []string) []string { return l[1:] }},
		{name: "two lines swapped", wantErr: "line 3: sequence number is 4, want 3",
			tamper: func(t *testing.T, l []string) []string {
				l[2], l[3] = l[3], l[2]
				return l
			}},
		{name: "forged line with recomputed hash but wrong prev", wantErr: "line 3: chain broken",
			tamper: func(t *testing.T, l []string) []string {
				forged := testEntry(99)
				forged.Seq = 3
				forged.Time = decodeEntry(t, l[2]).Time
				forged.Prev = strings.Repeat("ab", 32)
				forged.Hash = hashEntry(forged)
				out := append([]string(nil), l[:2]...)
				out = append(out, encodeEntry(t, forged))
				return append(out, l[2:]...)
			}},
		{name: "forged line renumbering the rest", wantErr: "line 4: chain broken",
			tamper: func(t *testing.T, l []string) []string {
				// Insert after line 3 and renumber every later line with
				// recomputed hashes: only a full re-chain would pass.
				forged := testEntry(99)
				forged.Seq = 4
				forged.Prev = flipLastHex(decodeEntry(t, l[2]).Hash)
				forged.Hash = hashEntry(forged)
				out := append([]string(nil), l[:3]...)
				out = append(out, encodeEntry(t, forged))
				for _, line := range l[3:] {
					e := decodeEntry(t, line)
					e.Seq++
					e.Hash = hashEntry(e)
					out = append(out, encodeEntry(t, e))
				}
				return out
			}},
		{name: "middle line truncated in half", wantErr: "line 3: not an audit entry",
			tamper: func(t *testing.T, l []string) []string {
				l[2] = l[2][:len(l[2])/2]
				return l
			}},
		{name: "last line truncated in half", wantErr: "line 6: not an audit entry",
			tamper: func(t *testing.T, l []string) []string {
				l[5] = l[5][:len(l[5])/2]
				return l
			}},
		{name: "blank line inserted", wantErr: "line 3: not an audit entry",
			tamper: func(t *testing.T, l []string) []string {
				return append(l[:2:2], append([]string{""}, l[2:]...)...)
			}},
		{name: "unknown field added", wantErr: "line 2: not an audit entry",
			tamper: func(t *testing.T, l []string) []string {
				l[1] = strings.Replace(l[1], `{`, `{"note":"x",`, 1)
				return l
			}},
		{name: "data after the entry on its line", wantErr: "line 2: not an audit entry",
			tamper: func(t *testing.T, l []string) []string {
				l[1] += ` {"seq":99,"tool":"forged"}`
				return l
			}},
		{name: "garbage after the entry on its line", wantErr: "line 5: not an audit entry",
			tamper: func(t *testing.T, l []string) []string {
				l[4] += `garbage`
				return l
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, lines := writeLog(t, 6)
			_, err := verifyLines(lines)
			require.NoError(t, err, "the untouched log verifies")

			_, err = verifyLines(tt.tamper(t, lines))
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func TestAuditReopenContinuesTheChain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := Open(path)
	require.NoError(t, err)
	for i := range 3 {
		require.NoError(t, a.Append(testEntry(i)))
	}
	require.NoError(t, a.Close())
	last := decodeEntry(t, readLines(t, path)[2])

	b := openTestLog(t, path)
	require.NoError(t, b.Append(testEntry(3)))
	require.NoError(t, b.Append(testEntry(4)))

	lines := readLines(t, path)
	require.Len(t, lines, 5)
	e := decodeEntry(t, lines[3])
	require.Equal(t, uint64(4), e.Seq)
	require.Equal(t, last.Hash, e.Prev)
	res, err := verifyLines(lines)
	require.NoError(t, err)
	require.Equal(t, 5, res.Lines)
}

func TestAuditTwoWritersAlternate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := openTestLog(t, path)
	b := openTestLog(t, path)
	for i := range 10 {
		w := a
		if i%2 == 1 || i == 7 || i == 8 {
			w = b
		}
		require.NoError(t, w.Append(testEntry(i)))
	}
	res, err := verifyLines(readLines(t, path))
	require.NoError(t, err)
	require.Equal(t, 10, res.Lines)
}

func TestAuditTwoWritersConcurrently(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	writers := []*Log{openTestLog(t, path), openTestLog(t, path), openTestLog(t, path)}
	const perGoroutine = 20
	var wg sync.WaitGroup
	for w := range writers {
		for g := range 3 {
			wg.Go(func() {
				for i := range perGoroutine {
					if err := writers[w].Append(testEntry(g*perGoroutine + i)); err != nil {
						t.Error(err) // not require: FailNow must not run off the test goroutine
						return
					}
				}
			})
		}
	}
	wg.Wait()
	res, err := verifyLines(readLines(t, path))
	require.NoError(t, err)
	require.Equal(t, len(writers)*3*perGoroutine, res.Lines)
}

func TestAuditFileMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "toolwarden")
	path := filepath.Join(dir, "audit.jsonl")
	a := openTestLog(t, path)
	require.NoError(t, a.Append(testEntry(0)))
	require.Equal(t, path, a.Path())

	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	di, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), di.Mode().Perm())
}

func TestAuditAppendSetsChainFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := openTestLog(t, path)
	// Whatever the caller puts in the chain fields is overwritten.
	e := testEntry(1)
	e.Seq, e.Prev, e.Hash, e.Time = 77, "forged", "forged", "yesterday"
	require.NoError(t, a.Append(e))
	got := decodeEntry(t, readLines(t, path)[0])
	require.Equal(t, uint64(1), got.Seq)
	require.Equal(t, genesis, got.Prev)
	require.Equal(t, hashEntry(got), got.Hash)
	require.NotEqual(t, "yesterday", got.Time)
}

// flipLastHex changes the last hex digit of h, so the result never equals h
// (replacing it with a fixed digit would, one time in sixteen).
func flipLastHex(h string) string {
	last := byte('0')
	if h[len(h)-1] == '0' {
		last = '1'
	}
	return h[:len(h)-1] + string(last)
}

// hashedLine encodes once what hashEntry and a second encoding gave, even
// when a value holds the hash member's own text.
func TestHashedLineIsTheEntryWithItsHash(t *testing.T) {
	for _, e := range []Entry{
		{Seq: 1, Session: "s", Tool: "read_file", Prev: genesis},
		{Seq: 2, Session: `,"hash":""`, Tool: `x","hash":"y`, Rule: "\u2028\"", Prev: genesis,
			DroppedArgs: []string{`"hash":""`}, Approval: "a", Version: "v"},
	} {
		want := e
		want.Hash = hashEntry(e)
		wantLine, err := json.Marshal(want)
		require.NoError(t, err)
		line, err := hashedLine(&e)
		require.NoError(t, err)
		require.Equal(t, want.Hash, e.Hash)
		require.Equal(t, string(wantLine)+"\n", string(line))
	}
}
