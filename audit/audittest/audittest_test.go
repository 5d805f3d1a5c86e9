package audittest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
)

func TestReadsWhatTheLogWrote(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	require.Empty(t, Lines(t, path), "a missing log has no lines")
	a, err := audit.Open(path)
	require.NoError(t, err)
	require.NoError(t, a.Append(audit.Entry{Session: "s", Tool: "read_file", ArgsSHA256: "-", Rule: "allowed", Outcome: "allowed"}))
	require.NoError(t, a.Append(audit.Entry{Session: "s", Tool: "read_file", ArgsSHA256: "-", Rule: "ok", Outcome: "completed"}))
	require.NoError(t, a.Append(audit.Entry{Session: "s", Tool: "write_file", ArgsSHA256: "-", Rule: "policy.deny", Outcome: "denied", Code: "denied.policy"}))
	require.NoError(t, a.Close())

	require.Len(t, Lines(t, path), 3)
	entries := Entries(t, path)
	require.Equal(t, uint64(3), entries[2].Seq)
	require.Equal(t, entries[1].Hash, entries[2].Prev)
	require.Equal(t, 2, Count(t, path, "read_file", ""))
	require.Equal(t, 1, Count(t, path, "", "denied"))
	require.Equal(t, []string{"allowed:allowed:", "completed:ok:", "denied:policy.deny:denied.policy"}, Trail(t, path))
}

func TestRechainKeepsAnEditedLogVerifying(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := audit.Open(path)
	require.NoError(t, err)
	for range 3 {
		require.NoError(t, a.Append(audit.Entry{Session: "s", Tool: "read_file", ArgsSHA256: "-", Rule: "allowed", Outcome: "allowed"}))
	}
	require.NoError(t, a.Close())
	lines := Lines(t, path)
	lines[1] = strings.Replace(lines[1], `"allowed"`, `"denied"`, 1)
	_, err = audit.Verify(strings.NewReader(strings.Join(lines, "\n") + "\n"))
	require.ErrorContains(t, err, "line 2: hash mismatch")
	_, err = audit.Verify(strings.NewReader(strings.Join(Rechain(t, lines, 1), "\n") + "\n"))
	require.NoError(t, err, "the hash chain alone no longer shows the edit")
}
