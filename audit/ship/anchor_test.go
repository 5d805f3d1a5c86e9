package ship

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/minio/minio-go/v7"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// anchorBucket is the bucket anchor tests write to on the shared MinIO:
// never the artifacts bucket, whose own tests expect only artifacts in it.
const anchorBucket = "toolwarden-test-audit-anchors"

// sharedS3 is the MinIO scripts/services runs, configured from the
// environment as toolwarden serve would be, and the anchors' bucket on it
// (made if missing).
func sharedS3(t *testing.T) (*minio.Client, string) {
	t.Helper()
	testenv.Need(t, "TOOLWARDEN_ARTIFACTS_ENDPOINT")
	t.Chdir(t.TempDir()) // no ./toolwarden.yaml
	t.Setenv("TOOLWARDEN_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	l, err := configs.Load(configs.Options{})
	require.NoError(t, err)
	c, err := NewS3Client(l.Config.Artifacts)
	require.NoError(t, err)
	ctx := context.Background()
	require.ErrorContains(t, CheckBucket(ctx, c, "toolwarden-no-such-bucket"), `bucket "toolwarden-no-such-bucket" does not exist`)
	if ok, err := c.BucketExists(ctx, anchorBucket); err == nil && !ok {
		err = c.MakeBucket(ctx, anchorBucket, minio.MakeBucketOptions{Region: l.Config.Artifacts.Region})
		if err != nil && minio.ToErrorResponse(err).Code != "BucketAlreadyOwnedByYou" {
			require.NoError(t, err)
		}
	}
	require.NoError(t, CheckBucket(ctx, c, anchorBucket))
	return c, anchorBucket
}

func appendN(t *testing.T, a *audit.Log, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		require.NoError(t, a.Append(audit.Entry{Session: "s", Tool: "read_file", ArgsSHA256: fmt.Sprint(i), Rule: "allowed", Outcome: guard.Allow}))
	}
}

func chainOf(t *testing.T, dir string) audit.Chain {
	t.Helper()
	files, err := audit.LogFiles(dir)
	require.NoError(t, err)
	chains := audit.VerifyChains(files)
	require.Len(t, chains, 1)
	require.NoError(t, chains[0].Err)
	return chains[0]
}

// TestAnchorsCatchACutAndARewrite against the real MinIO: anchors written
// as the log grows (and rotates) agree with it; cutting the last lines,
// which audit verify alone cannot see, contradicts the newest anchor; a
// whole new chain in the file's place contradicts every anchor.
func TestAnchorsCatchACutAndARewrite(t *testing.T) {
	client, bucket := sharedS3(t)
	prefix := "anchor-test-" + uuid.NewString() + "/"
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	a, err := audit.OpenWith(path, audit.Options{Replica: "r1", MaxBytes: 4096, Log: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	an := NewAnchorer(client, bucket, prefix, "r1", time.Hour, a.Head, slog.New(slog.DiscardHandler))
	for range 3 {
		appendN(t, a, 0, 10)
		require.NoError(t, an.Anchor())
	}
	require.NoError(t, an.Anchor(), "an unchanged head is not written twice")
	require.NoError(t, a.Close())
	require.NoError(t, an.Close())

	ctx := context.Background()
	whole := chainOf(t, dir)
	require.Greater(t, len(whole.Files), 1, "the log rotated")
	rep, err := CheckAnchors(ctx, client, bucket, prefix, whole)
	require.NoError(t, err)
	require.Equal(t, 3, rep.Checked)
	require.Empty(t, rep.Contradicted)
	require.Equal(t, "s3://"+bucket+"/"+prefix+"r1/audit.jsonl/", rep.Dir)

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(b), "\n")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines[:len(lines)-4], "")), 0o600)) // the last 3 lines
	chain := chainOf(t, dir)                                                                      // verify alone is content
	rep, err = CheckAnchors(ctx, client, bucket, prefix, chain)
	require.NoError(t, err)
	require.Equal(t, 2, rep.Checked)
	require.Len(t, rep.Contradicted, 1)
	c := rep.Contradicted[0]
	require.Contains(t, c.Problem, "lines were cut from the end")
	require.Equal(t, "r1", c.Anchor.Replica, "the record is read for the report")
	require.NotEmpty(t, c.Anchor.AnchoredAt)
	require.Equal(t, whole.Files[len(whole.Files)-1].LastSeq, c.Anchor.Seq)

	for _, f := range chain.Files {
		require.NoError(t, os.Remove(f.Path))
	}
	b2, err := audit.OpenWith(path, audit.Options{Replica: "r1", Log: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	appendN(t, b2, 100, 40) // a forged chain, as long as the real one
	require.NoError(t, b2.Close())
	rep, err = CheckAnchors(ctx, client, bucket, prefix, chainOf(t, dir))
	require.NoError(t, err)
	require.Zero(t, rep.Checked)
	require.Len(t, rep.Contradicted, 3)
	require.Contains(t, rep.Contradicted[0].Problem, "the chain was rewritten")
}

// TestAnchorerTicksAndSurvivesAnOutage: the ticker anchors a moving head;
// an S3 server that does not answer fails the anchor, not the log.
func TestAnchorerTicksAndSurvivesAnOutage(t *testing.T) {
	client, bucket := sharedS3(t)
	prefix := "anchor-test-" + uuid.NewString() + "/"
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := audit.OpenWith(path, audit.Options{Replica: "r2", Log: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer a.Close()
	an := NewAnchorer(client, bucket, prefix, "r2", 20*time.Millisecond, a.Head, slog.New(slog.DiscardHandler))
	defer an.Close()
	appendN(t, a, 0, 2)
	require.Eventually(t, func() bool {
		n := 0
		for range client.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
			n++
		}
		return n == 1
	}, 20*time.Second, 20*time.Millisecond)

	dead, err := minio.New("127.0.0.1:1", &minio.Options{MaxRetries: 1})
	require.NoError(t, err)
	off := NewAnchorer(dead, bucket, prefix, "r2", time.Hour, a.Head, slog.New(slog.DiscardHandler))
	appendN(t, a, 2, 1)
	require.Error(t, off.Anchor())
	appendN(t, a, 3, 1)
	require.Error(t, off.Close())
}
