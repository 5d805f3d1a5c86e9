package artifacts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/minio/minio-go/v7"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/toolerr"
)

// sharedStore opens the store scripts/services runs, configured the way
// toolwarden serve would be from the same environment.
func sharedStore(t testing.TB) *Store {
	t.Helper()
	testenv.Need(t, "TOOLWARDEN_ARTIFACTS_ENDPOINT")
	return openFromEnv(t)
}

func openFromEnv(t testing.TB) *Store {
	t.Helper()
	s, err := Open(openLimits(t), discard)
	require.NoError(t, err)
	require.NoError(t, s.Probe(context.Background()))
	t.Cleanup(func() { s.Close() })
	return s
}

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// openLimits is the artifacts configuration toolwarden would load from
// the environment.
func openLimits(t testing.TB) Limits {
	t.Helper()
	t.Chdir(t.TempDir()) // no ./toolwarden.yaml
	t.Setenv("TOOLWARDEN_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	l, err := configs.Load(configs.Options{})
	require.NoError(t, err)
	return l.Config.Artifacts
}

// newTask is a fresh task ID, so tests never see each other's artifacts.
func newTask() string { return uuid.NewString() }

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// requireAbsent checks that no object exists under key.
func requireAbsent(t *testing.T, s *Store, key string) {
	t.Helper()
	_, err := s.client.StatObject(ctxT(t), s.bucket, key, minio.StatObjectOptions{})
	require.Error(t, err)
	require.Equal(t, "NoSuchKey", minio.ToErrorResponse(err).Code)
}

func requireCode(t *testing.T, err error, code toolerr.Code) *toolerr.Error {
	t.Helper()
	require.Error(t, err)
	te := toolerr.As(err)
	require.Equal(t, code, te.Code, "%s", te.Message)
	require.NotEmpty(t, te.Hint)
	return te
}

func withCaps(s *Store, store, inline int64) *Store {
	c := *s
	c.limits.MaxStoreBytes, c.limits.MaxInlineBytes = store, inline
	return &c
}

func minioList(prefix string, recursive bool) minio.ListObjectsOptions {
	return minio.ListObjectsOptions{Prefix: prefix, Recursive: recursive}
}

func minioPut() minio.PutObjectOptions { return minio.PutObjectOptions{} }
