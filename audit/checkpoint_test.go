package audit

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// newTestSigner returns a fresh signer and the keys that verify it.
func newTestSigner(t testing.TB) (*Signer, Keys) {
	t.Helper()
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	s := NewSigner(key)
	return s, Keys{s.KeyID(): pub}
}

// signedLog writes n entries to a log checkpointed every `every` lines,
// closes it and returns its path, lines and keys.
func signedLog(t *testing.T, n, every int) (string, []string, Keys) {
	t.Helper()
	s, keys := newTestSigner(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenWith(path, Options{Signer: s, CheckpointLines: every, Replica: "r1"})
	require.NoError(t, err)
	for i := range n {
		require.NoError(t, a.Append(testEntry(i)))
	}
	require.NoError(t, a.Close())
	return path, readLines(t, path), keys
}

func verifySignedLines(lines []string, keys Keys) (VerifyResult, error) {
	return VerifySigned(strings.NewReader(strings.Join(lines, "\n")+"\n"), keys)
}

// rechain recomputes every line's prev and hash from line `from` on, as
// someone who edits a log without the key would, to hide the edit from
// the hash chain.
func rechain(t *testing.T, lines []string, from int) []string {
	t.Helper()
	out := append([]string(nil), lines...)
	prev := genesis
	if from > 0 {
		prev = decodeEntry(t, out[from-1]).Hash
	}
	for i := from; i < len(out); i++ {
		e := decodeEntry(t, out[i])
		e.Prev = prev
		e.Hash = hashEntry(e)
		out[i] = encodeEntry(t, e)
		prev = e.Hash
	}
	return out
}

func outcomes(t *testing.T, lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		e := decodeEntry(t, l)
		if e.Outcome == OutcomeCheckpoint {
			b.WriteString("C")
		} else {
			b.WriteString(".")
		}
	}
	return b.String()
}

func TestCheckpointEveryNLinesAndAtClose(t *testing.T) {
	_, lines, keys := signedLog(t, 12, 5)
	require.Equal(t, ".....C.....C..C", outcomes(t, lines), "a checkpoint after every 5 lines, and one at close")
	require.Equal(t, CheckpointShutdown, decodeEntry(t, lines[len(lines)-1]).Rule)
	res, err := verifySignedLines(lines, keys)
	require.NoError(t, err)
	require.Equal(t, 3, res.Checkpoints)
	require.Zero(t, res.Unsigned)
	require.Equal(t, CheckpointRecord{Line: 15, Seq: 15, Rule: CheckpointShutdown, KeyID: res.KeyIDs[0],
		Time: decodeEntry(t, lines[14]).Time}, res.LastCheckpoint)
	cp := decodeEntry(t, lines[5])
	require.Equal(t, "r1", cp.Replica)
	require.Equal(t, decodeEntry(t, lines[4]).Hash, cp.Prev, "a checkpoint signs the chain head it chains to")
}

func TestCheckpointNotRepeatedOnAnIdleLog(t *testing.T) {
	path, lines, _ := signedLog(t, 3, 100)
	require.Equal(t, "...C", outcomes(t, lines))
	s, _ := newTestSigner(t)
	a, err := OpenWith(path, Options{Signer: s, CheckpointLines: 100})
	require.NoError(t, err)
	require.NoError(t, a.Close())
	require.Equal(t, lines, readLines(t, path), "a log that ends in a shutdown checkpoint gets no other one")

	empty := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err = OpenWith(empty, Options{Signer: s, CheckpointLines: 100})
	require.NoError(t, err)
	require.NoError(t, a.Close())
	require.NoFileExists(t, empty+".torn")
	res, err := verifyFile(empty, Keys{})
	require.NoError(t, err)
	require.Zero(t, res.Lines, "nothing to sign in an empty log")
}

func TestCheckpointEveryInterval(t *testing.T) {
	s, keys := newTestSigner(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenWith(path, Options{Signer: s, CheckpointLines: 1000, CheckpointInterval: 5 * time.Millisecond})
	require.NoError(t, err)
	defer a.Close()
	require.NoError(t, a.Append(testEntry(1)))
	require.Eventually(t, func() bool { return outcomes(t, readLines(t, path)) == ".C" }, 10*time.Second, 5*time.Millisecond)
	require.Equal(t, CheckpointInterval, decodeEntry(t, readLines(t, path)[1]).Rule)
	time.Sleep(20 * time.Millisecond) // ticks with nothing unsigned write nothing
	require.Equal(t, ".C", outcomes(t, readLines(t, path)))
	_, err = verifySignedLines(readLines(t, path), keys)
	require.NoError(t, err)
}

func TestCheckpointBeforeEachRotation(t *testing.T) {
	s, keys := newTestSigner(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenWith(path, Options{Signer: s, CheckpointLines: 1000, MaxBytes: 4096})
	require.NoError(t, err)
	for i := range 60 {
		require.NoError(t, a.Append(testEntry(i)))
	}
	require.NoError(t, a.Close())
	files, err := LogFiles(filepath.Dir(path))
	require.NoError(t, err)
	require.Greater(t, len(files), 2)
	chains := VerifyChainsSigned(files, keys)
	require.Len(t, chains, 1)
	require.NoError(t, chains[0].Err)
	for _, f := range chains[0].Files[:len(chains[0].Files)-1] {
		require.Equal(t, CheckpointRotation, f.LastCheckpoint.Rule, f.Path)
		require.Equal(t, f.Lines, f.LastCheckpoint.Line, "%s ends in its checkpoint", f.Path)
	}
	sg := chains[0].Signing()
	require.Zero(t, sg.Unsigned)
	require.Equal(t, CheckpointShutdown, sg.Last.Rule)
	require.Equal(t, len(files), sg.Checkpoints)
}

// TestVerifySignedDetectsTampering is the table of what an attacker
// without the key may do to a signed log, and what verify says.
func TestVerifySignedDetectsTampering(t *testing.T) {
	_, lines, keys := signedLog(t, 12, 5) // .....C.....C..C
	otherSigner, otherKeys := newTestSigner(t)
	forge := func(line string, edit func(*Entry)) string {
		e := decodeEntry(t, line)
		edit(&e)
		return encodeEntry(t, e)
	}
	for _, tc := range []struct {
		name string
		edit func() []string
		keys Keys
		want string
	}{
		{"a checkpoint signed by another key under this key's ID", func() []string {
			out := append([]string(nil), lines...)
			out[5] = forge(out[5], func(e *Entry) {
				e.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(otherSigner.key, checkpointMessage(e)))
			})
			return rechain(t, out, 5)
		}, keys, "line 6 (seq 6): checkpoint signature does not verify"},
		{"a checkpoint's time altered", func() []string {
			out := append([]string(nil), lines...)
			out[11] = forge(out[11], func(e *Entry) { e.Time = "2020-01-01T00:00:00Z" })
			return rechain(t, out, 11)
		}, keys, "line 12 (seq 12): checkpoint signature does not verify"},
		{"a checkpoint's reason altered", func() []string {
			out := append([]string(nil), lines...)
			out[11] = forge(out[11], func(e *Entry) { e.Rule = CheckpointShutdown })
			return rechain(t, out, 11)
		}, keys, "line 12 (seq 12): checkpoint signature does not verify"},
		{"a line before a checkpoint altered and the chain rewritten", func() []string {
			out := append([]string(nil), lines...)
			out[7] = forge(out[7], func(e *Entry) { e.Outcome = "denied" })
			return rechain(t, out, 7)
		}, keys, "line 12 (seq 12): checkpoint signature does not verify"},
		{"a line before a checkpoint deleted and the rest renumbered", func() []string {
			out := append(append([]string(nil), lines[:2]...), lines[3:]...)
			for i := 2; i < len(out); i++ {
				out[i] = forge(out[i], func(e *Entry) { e.Seq-- })
			}
			return rechain(t, out, 2)
		}, keys, "line 5 (seq 5): checkpoint signature does not verify"},
		{"a line altered, chain not rewritten", func() []string {
			out := append([]string(nil), lines...)
			out[2] = strings.Replace(out[2], `"allowed"`, `"denied"`, 1)
			return out
		}, keys, "line 3: hash mismatch"},
		{"checked with another key", func() []string { return lines }, otherKeys, "line 6 (seq 6): checkpoint signed by key"},
		{"a checkpoint stripped of its signature", func() []string {
			out := append([]string(nil), lines...)
			out[5] = forge(out[5], func(e *Entry) { e.Signature = "" })
			return rechain(t, out, 5)
		}, keys, "line 6: checkpoint without a signature"},
		{"a signature copied onto a call's line", func() []string {
			out := append([]string(nil), lines...)
			sig := decodeEntry(t, out[5])
			out[6] = forge(out[6], func(e *Entry) { e.KeyID, e.Signature = sig.KeyID, sig.Signature })
			return rechain(t, out, 6)
		}, keys, "line 7: a allowed line carries a signature"},
		{"a key ID with terminal escapes", func() []string {
			out := append([]string(nil), lines...)
			out[5] = forge(out[5], func(e *Entry) { e.KeyID = "\x1b[2Jok" })
			return rechain(t, out, 5)
		}, keys, `line 6: checkpoint key_id "\x1b[2Jok" is not a key ID (16 hex digits)`},
		{"a checkpoint of an unknown reason", func() []string {
			out := append([]string(nil), lines...)
			out[5] = forge(out[5], func(e *Entry) { e.Rule = "audit.checkpoint.trust_me" })
			return rechain(t, out, 5)
		}, keys, `line 6: checkpoint rule "audit.checkpoint.trust_me" is none of`},
		{"a signature that is no base64", func() []string {
			out := append([]string(nil), lines...)
			out[5] = forge(out[5], func(e *Entry) { e.Signature = "!!" })
			return rechain(t, out, 5)
		}, keys, "line 6 (seq 6): checkpoint signature is not a base64 Ed25519 signature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := verifySignedLines(tc.edit(), tc.keys)
			require.ErrorContains(t, err, tc.want)
			_, err = verifySignedLines(lines, keys)
			require.NoError(t, err, "the untouched log verifies")
		})
	}
}

// TestVerifySignedReportsWhatIsNotSigned: cuts and removals that keep a
// valid chain leave lines no checkpoint signs, which verify counts.
func TestVerifySignedReportsWhatIsNotSigned(t *testing.T) {
	_, lines, keys := signedLog(t, 12, 5) // .....C.....C..C
	for _, tc := range []struct {
		name        string
		lines       []string
		checkpoints int
		unsigned    int
		lastRule    string
	}{
		{"whole", lines, 3, 0, CheckpointShutdown},
		{"cut before the shutdown checkpoint", lines[:14], 2, 2, CheckpointLines},
		{"cut just after a checkpoint", lines[:12], 2, 0, CheckpointLines},
		{"every checkpoint removed and the chain rewritten", func() []string {
			var out []string
			for _, l := range lines {
				if decodeEntry(t, l).Outcome != OutcomeCheckpoint {
					e := decodeEntry(t, l)
					e.Seq = uint64(len(out) + 1)
					out = append(out, encodeEntry(t, e))
				}
			}
			return rechain(t, out, 0)
		}(), 0, 12, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := verifySignedLines(tc.lines, keys)
			require.NoError(t, err)
			require.Equal(t, tc.checkpoints, res.Checkpoints)
			require.Equal(t, tc.unsigned, res.Unsigned)
			require.Equal(t, tc.lastRule, res.LastCheckpoint.Rule)
		})
	}
}

func TestReportSaysWhatIsSigned(t *testing.T) {
	path, lines, keys := signedLog(t, 12, 5)
	var b strings.Builder
	require.NoError(t, ReportChains(&b, VerifyChainsSigned([]string{path}, keys)))
	require.Contains(t, b.String(), "signatures: 3 checkpoints verified with key ")
	require.Contains(t, b.String(), "line 15 (seq 15, audit.checkpoint.shutdown")
	require.NotContains(t, b.String(), "UNSIGNED")

	writeLines(t, path, lines[:14])
	b.Reset()
	chains := VerifyChainsSigned([]string{path}, keys)
	require.NoError(t, ReportChains(&b, chains))
	require.Contains(t, b.String(), "UNSIGNED: 2 lines after the last checkpoint (seq 13-14)")
	require.Equal(t, 2, Unsigned(chains))

	b.Reset()
	require.NoError(t, ReportChains(&b, VerifyChains([]string{path})))
	require.Contains(t, b.String(), "2 signed checkpoints, signatures not checked (give --pubkey)")
}

func TestCheckpointMessage(t *testing.T) {
	e := Entry{Seq: 7, Prev: "ab", Time: "2026-01-02T03:04:05Z", Replica: "r1", Rule: CheckpointLines, KeyID: "0011"}
	require.Equal(t, "toolwarden audit checkpoint v1\n7\nab\n2026-01-02T03:04:05Z\nr1\naudit.checkpoint.lines\n0011\n",
		string(checkpointMessage(&e)), "docs/audit.md documents this message for verifiers of other languages")
}
