package artifacts

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/stretchr/testify/require"
)

// TestObjectsContract pins the behaviour of objects the tools rely on. It
// runs against MinIO too, so the fake is held to what the real store does.
func TestObjectsContract(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		p := "tasks/" + newTask() + "/"
		put := func(key, body string, opts minio.PutObjectOptions) error {
			_, err := s.objects.Put(ctxT(t), p+key, strings.NewReader(body), int64(len(body)), opts)
			return err
		}

		t.Run("missing key", func(t *testing.T) {
			_, _, err := s.objects.Get(ctxT(t), p+"missing", 0, 1<<30)
			resp := minio.ToErrorResponse(err)
			require.Equal(t, "NoSuchKey", resp.Code)
			require.Equal(t, http.StatusNotFound, resp.StatusCode)
		})

		t.Run("a body that fails or ends early leaves nothing", func(t *testing.T) {
			_, err := s.objects.Put(ctxT(t), p+"dropped", &failing{n: 100 << 10}, 200<<10, minio.PutObjectOptions{DisableMultipart: true})
			require.Error(t, err)
			requireAbsent(t, s, p+"dropped")
			_, err = s.objects.Put(ctxT(t), p+"short", strings.NewReader("abc"), 10, minio.PutObjectOptions{DisableMultipart: true})
			require.Error(t, err)
			requireAbsent(t, s, p+"short")
		})

		t.Run("bytes past the announced size are not stored", func(t *testing.T) {
			_, err := s.objects.Put(ctxT(t), p+"long", strings.NewReader("abcdef"), 3, minio.PutObjectOptions{DisableMultipart: true})
			require.NoError(t, err)
			require.Equal(t, "abc", getString(t, s, p+"long"))
		})

		t.Run("If-None-Match: * refuses an existing key", func(t *testing.T) {
			var noOverwrite minio.PutObjectOptions
			noOverwrite.SetMatchETagExcept("*")
			require.NoError(t, put("once", "first", noOverwrite))
			resp := minio.ToErrorResponse(put("once", "second", noOverwrite))
			require.Equal(t, "PreconditionFailed", resp.Code)
			require.Equal(t, http.StatusPreconditionFailed, resp.StatusCode)
			require.NoError(t, put("once", "third", minio.PutObjectOptions{}))

			require.Equal(t, "third", getString(t, s, p+"once"))
			_, info, err := s.objects.Get(ctxT(t), p+"once", 0, 1<<30)
			require.NoError(t, err)
			require.Equal(t, int64(5), info.Size)
			require.Equal(t, "application/octet-stream", info.ContentType, "the default content type")
			require.NotEmpty(t, info.ETag)
		})

		t.Run("ranges", func(t *testing.T) {
			require.NoError(t, put("r", "0123456789", minio.PutObjectOptions{}))
			require.NoError(t, put("empty", "", minio.PutObjectOptions{}))
			for _, c := range []struct {
				key            string
				offset, length int64
				want           string
			}{
				{"r", 0, 4, "0123"}, {"r", 3, 2, "34"}, {"r", 8, 100, "89"}, {"r", 9, 1, "9"},
				{"r", 10, 5, ""}, {"r", 11, 5, ""}, {"empty", 0, 5, ""},
			} {
				body, info, err := s.objects.Get(ctxT(t), p+c.key, c.offset, c.length)
				require.NoError(t, err, "%+v", c)
				data, err := io.ReadAll(body)
				body.Close()
				require.NoError(t, err)
				require.Equal(t, c.want, string(data), "%+v", c)
				require.Equal(t, int64(len(map[string]string{"r": "0123456789"}[c.key])), info.Size, "the whole size, %+v", c)
				require.NotEmpty(t, info.ETag)
			}
		})

		t.Run("listing", func(t *testing.T) {
			for _, k := range []string{"c", "a", "b/1", "b/2", "d/x/y", "a.txt"} {
				require.NoError(t, put("l/"+k, k, minio.PutObjectOptions{}))
			}
			l := p + "l/"
			require.Equal(t, []string{l + "a", l + "a.txt", l + "b/1", l + "b/2", l + "c", l + "d/x/y"},
				listKeys(t, s, minio.ListObjectsOptions{Prefix: l, Recursive: true}))
			require.Equal(t, []string{l + "a", l + "a.txt", l + "c", l + "b/", l + "d/"},
				listKeys(t, s, minio.ListObjectsOptions{Prefix: l}), "a page's objects come before its prefixes")
			require.Equal(t, []string{l + "a", l + "a.txt", l + "b/", l + "c", l + "d/"},
				listKeys(t, s, minio.ListObjectsOptions{Prefix: l, MaxKeys: 3}), "MaxKeys is the page size, not a total")
			require.Equal(t, []string{l + "b/2", l + "c", l + "d/x/y"},
				listKeys(t, s, minio.ListObjectsOptions{Prefix: l, Recursive: true, StartAfter: l + "b/1", MaxKeys: 1}))

			var seen int
			err := s.objects.List(ctxT(t), minio.ListObjectsOptions{Prefix: l, Recursive: true, MaxKeys: 2}, func(minio.ObjectInfo) bool {
				seen++
				return false
			})
			require.NoError(t, err)
			require.Equal(t, 1, seen, "fn returning false stops the listing")

			ctx, cancel := context.WithCancel(ctxT(t))
			cancel()
			require.Error(t, s.objects.List(ctx, minio.ListObjectsOptions{Prefix: l}, func(minio.ObjectInfo) bool { return true }))
		})
	})
}

func getString(t *testing.T, s *Store, key string) string {
	t.Helper()
	r, _, err := s.objects.Get(ctxT(t), key, 0, 1<<30)
	require.NoError(t, err)
	defer r.Close()
	data, err := io.ReadAll(r)
	require.NoError(t, err)
	return string(data)
}
