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
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// forEachStore runs fn as two subtests: "fake", over fakeObjects, always;
// and "minio", over the store scripts/services runs, which skips without
// it (and fails under scripts/test, see testenv.Need).
func forEachStore(t *testing.T, fn func(t *testing.T, s *Store)) {
	t.Helper()
	t.Run("fake", func(t *testing.T) { fn(t, fakeStore(t)) })
	t.Run("minio", func(t *testing.T) { fn(t, sharedStore(t)) })
}

// fakeStore is a Store over an empty fakeObjects, with the limits
// toolwarden would load from the environment.
func fakeStore(t testing.TB) *Store {
	t.Helper()
	return &Store{objects: newFakeObjects(), bucket: "fake-bucket", limits: openLimits(t), log: discard}
}

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
	r, _, err := s.objects.Get(ctxT(t), key, 0, 1<<30)
	if err == nil {
		r.Close()
	}
	require.Error(t, err)
	require.Equal(t, "NoSuchKey", minio.ToErrorResponse(err).Code)
}

// listKeys is every key a listing sends, in the order it sends them.
func listKeys(t *testing.T, s *Store, opts minio.ListObjectsOptions) []string {
	t.Helper()
	var keys []string
	require.NoError(t, s.objects.List(ctxT(t), opts, func(obj minio.ObjectInfo) bool {
		keys = append(keys, obj.Key)
		return true
	}))
	return keys
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
