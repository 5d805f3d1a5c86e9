package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit/audittest"
)

func keygen(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command(binary, "audit", "keygen", "--out", dir).CombinedOutput()
	require.NoError(t, err, string(out))
	return string(out)
}

// TestAuditSignedCheckpoints drives the built binary: keygen, a server
// over stdio signing its log, three calls, a clean shutdown that signs the
// tail; verify with the public key passes; an edited line, the same edit
// with the chain rewritten, a wrong key and a cut tail are each reported.
func TestAuditSignedCheckpoints(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	keys := filepath.Join(filepath.Dir(ws), "keys")
	require.NoError(t, os.Mkdir(keys, 0o700))
	out := keygen(t, keys)
	require.Contains(t, out, "audit-signing.key (private, mode 0600)")
	require.Contains(t, out, "key id ")
	for name, mode := range map[string]os.FileMode{"audit-signing.key": 0o600, "audit-signing.pub": 0o644} {
		fi, err := os.Stat(filepath.Join(keys, name))
		require.NoError(t, err)
		require.Equal(t, mode, fi.Mode().Perm(), name)
	}
	again, err := exec.Command(binary, "audit", "keygen", "--out", keys).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(again), "exists; keygen never overwrites a key")

	path := filepath.Join(filepath.Dir(ws), "audit.jsonl")
	pub := filepath.Join(keys, "audit-signing.pub")
	env = append(env, "TOOLWARDEN_AUDIT_SIGNING_KEY_FILE="+filepath.Join(keys, "audit-signing.key"))
	c, err := client.NewStdioMCPClient(binary, env, "serve", "--workspace", ws)
	require.NoError(t, err)
	initialize(t, c)
	for range 3 {
		require.False(t, callReadHello(t, c).IsError)
	}
	require.NoError(t, c.Close())

	lines := audittest.Lines(t, path)
	last := audittest.Decode(t, lines[len(lines)-1], len(lines))
	require.Equal(t, "audit.checkpoint.shutdown", last.Rule, "a clean shutdown signs the tail")
	report, err := auditVerify(t, "--pubkey", pub, "--require-signed", path)
	require.NoError(t, err, report)
	require.Contains(t, report, "signatures: 1 checkpoints verified with key ")
	require.NotContains(t, report, "UNSIGNED")

	tamper := func(t *testing.T, lines []string) string {
		t.Helper()
		p := filepath.Join(t.TempDir(), "audit.jsonl")
		require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
		return p
	}
	edited := append([]string(nil), lines...)
	edited[2] = strings.Replace(edited[2], `"rule":"allowed"`, `"rule":"policy.deny"`, 1)
	require.NotEqual(t, lines[2], edited[2])
	report, err = auditVerify(t, "--pubkey", pub, tamper(t, edited))
	require.Error(t, err)
	require.Contains(t, report, "line 3: hash mismatch (the line was edited)")

	report, err = auditVerify(t, "--pubkey", pub, tamper(t, audittest.Rechain(t, edited, 2)))
	require.Error(t, err, "a rewritten chain passes the hashes but not the signature")
	require.Regexp(t, `line \d+ \(seq \d+\): checkpoint signature does not verify with key`, report)

	other := filepath.Join(t.TempDir(), "other")
	require.NoError(t, os.Mkdir(other, 0o700))
	keygen(t, other)
	report, err = auditVerify(t, "--pubkey", filepath.Join(other, "audit-signing.pub"), path)
	require.Error(t, err)
	require.Contains(t, report, "which no --pubkey names")

	cut := tamper(t, lines[:len(lines)-2])
	report, err = auditVerify(t, "--pubkey", pub, cut)
	require.NoError(t, err, "unsigned lines are a warning without --require-signed")
	require.Regexp(t, `UNSIGNED: (no checkpoint: none of the \d+ lines is signed|\d+ lines after the last checkpoint)`, report)
	report, err = auditVerify(t, "--pubkey", pub, "--require-signed", cut)
	require.Error(t, err)
	require.Contains(t, report, "--require-signed: ")
}

// TestServeRefusesAnOpenSigningKey: a key file others may read is no
// secret, and the server does not start with it.
func TestServeRefusesAnOpenSigningKey(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	keys := t.TempDir()
	keygen(t, keys)
	key := filepath.Join(keys, "audit-signing.key")
	require.NoError(t, os.Chmod(key, 0o640))
	cmd := exec.Command(binary, "serve", "--workspace", ws)
	cmd.Env = append(env, "TOOLWARDEN_AUDIT_SIGNING_KEY_FILE="+key)
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "audit.signing_key_file: "+key+" is mode 0640: a signing key must be 0600 or stricter")
}
