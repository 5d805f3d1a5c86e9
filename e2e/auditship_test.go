package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// callOnce runs one read_file through `toolwarden call` with env.
func callOnce(t *testing.T, ws string, env []string) {
	t.Helper()
	cmd := exec.Command(binary, "call", "--workspace", ws, "read_file", `{"path":"hello.txt"}`)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
}

// TestAuditAnchorsFromTheBinary: servers with audit.anchor write the chain
// head to the real MinIO; audit verify --anchors agrees with the log, and
// once the last lines are cut (which audit verify alone cannot tell), it
// fails naming the anchor the file contradicts.
func TestAuditAnchorsFromTheBinary(t *testing.T) {
	testenv.Need(t, "TOOLWARDEN_ARTIFACTS_ENDPOINT")
	ws, env := workspace(t)
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TOOLWARDEN_ARTIFACTS_") {
			env = append(env, kv)
		}
	}
	dir := filepath.Join(filepath.Dir(ws), "audit")
	path := filepath.Join(dir, "audit.jsonl")
	prefix := "e2e-anchors-" + uuid.NewString() + "/"
	bucket := anchorBucket(t)
	env = append(env, "TOOLWARDEN_AUDIT_PATH="+path, "TOOLWARDEN_AUDIT_REPLICA_ID=e2e-1",
		"TOOLWARDEN_AUDIT_ANCHOR_BUCKET="+bucket, "TOOLWARDEN_AUDIT_ANCHOR_PREFIX="+prefix)
	for range 3 {
		callOnce(t, ws, env) // each writes its last head as it exits
	}
	verify := func(args ...string) (string, error) {
		cmd := exec.Command(binary, append([]string{"audit", "verify"}, args...)...)
		cmd.Env, cmd.Dir = env, ws
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := verify("--anchors", dir)
	require.NoError(t, err, out)
	require.Contains(t, out, "anchors s3://"+bucket+"/"+prefix+"e2e-1/audit.jsonl/: 3 agree")

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines[:len(lines)-2], "")), 0o600))
	out, err = verify(dir)
	require.NoError(t, err, "the chain alone cannot tell a cut tail: "+out)
	out, err = verify("--anchors", dir)
	require.Error(t, err)
	require.Contains(t, out, "anchors s3://")
	require.Regexp(t, `CONTRADICTED: s3://\S+/e2e-1/audit.jsonl/\d{20}-[0-9a-f]{64}\.json \(anchored at 20\S+, line time 20\S+\): the chain ends at seq \d+, but seq \d+ \(hash [0-9a-f]{64}\) was anchored: lines were cut from the end`, out)
	require.Contains(t, out, "the files contradict 1 anchor(s)")

	out, err = verify("--anchors", "--config", filepath.Join(t.TempDir(), "none.yaml"), dir)
	require.Error(t, err, out)
}

// TestAuditShippingFromTheBinary: with audit.ship.syslog, the lines a call
// writes reach a syslog server as they are in the file; with the server
// gone, the call still succeeds and its lines are all in the file.
func TestAuditShippingFromTheBinary(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	got := make(chan string, 64)
	go func() {
		buf := make([]byte, 65536)
		for {
			n, _, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			got <- string(buf[:n])
		}
	}()
	path := filepath.Join(filepath.Dir(ws), "shipped", "audit.jsonl")
	env = append(env, "TOOLWARDEN_AUDIT_PATH="+path, "TOOLWARDEN_AUDIT_SHIP_SYSLOG=udp://"+c.LocalAddr().String())
	callOnce(t, ws, env)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	local := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var shipped []string
	for len(shipped) < len(local) {
		select {
		case m := <-got:
			require.Regexp(t, `^<110>1 \S+ \S+ toolwarden \d+ audit - \{`, m)
			shipped = append(shipped, m[strings.Index(m, "{"):])
		case <-time.After(10 * time.Second):
			t.Fatalf("shipped %d of %d lines", len(shipped), len(local))
		}
	}
	require.Equal(t, local, shipped)

	c.Close()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gone := tcp.Addr().String()
	tcp.Close()
	env = append(slices.Clone(env), "TOOLWARDEN_AUDIT_SHIP_SYSLOG=tcp://"+gone)
	callOnce(t, ws, env)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(after), len(b), "the call's lines are in the file with the sink down")
}

// anchorBucket makes, on the shared MinIO, the bucket anchors go to in
// tests: never the artifacts bucket, whose tests expect only artifacts.
func anchorBucket(t *testing.T) string {
	t.Helper()
	const bucket = "toolwarden-test-audit-anchors"
	c, err := minio.New(os.Getenv("TOOLWARDEN_ARTIFACTS_ENDPOINT"), &minio.Options{
		Creds: credentials.NewStaticV4(os.Getenv("TOOLWARDEN_ARTIFACTS_ACCESS_KEY"), os.Getenv("TOOLWARDEN_ARTIFACTS_SECRET_KEY"), "")})
	require.NoError(t, err)
	if ok, err := c.BucketExists(ctxT(t), bucket); err == nil && !ok {
		err = c.MakeBucket(ctxT(t), bucket, minio.MakeBucketOptions{Region: os.Getenv("TOOLWARDEN_ARTIFACTS_REGION")})
		if err != nil && minio.ToErrorResponse(err).Code != "BucketAlreadyOwnedByYou" {
			require.NoError(t, err)
		}
	}
	return bucket
}
