package artifacts

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/artifactkey"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

func TestRoundTripText(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		task := newTask()
		content := "# Report\n\nhéllo, wörld\n"
		out, err := s.store(ctxT(t), StoreIn{TaskID: task, Name: "report.md", Content: content, Encoding: "text", ContentType: "text/markdown"})
		require.NoError(t, err)
		require.Equal(t, artifactkey.Key(task, "report.md"), out.Key)
		require.Equal(t, "artifact://tasks/"+task+"/report.md", out.URI)
		require.Equal(t, int64(len(content)), out.Size)
		require.Equal(t, sha([]byte(content)), out.SHA256)
		require.NotEmpty(t, out.ETag)

		for _, in := range []RetrieveIn{{TaskID: task, Name: "report.md"}, {Key: out.Key}, {Key: out.Key, Encoding: "text"}} {
			got, err := s.retrieve(ctxT(t), in)
			require.NoError(t, err)
			require.Equal(t, "text", got.Encoding)
			require.Equal(t, content, got.Content)
			require.Equal(t, out.SHA256, got.SHA256)
			require.Equal(t, "text/markdown", got.ContentType)
			require.Equal(t, out.Size, got.Size)
			require.NotEmpty(t, got.Modified)
		}
		got, err := s.retrieve(ctxT(t), RetrieveIn{Key: out.Key, Encoding: "base64"})
		require.NoError(t, err)
		require.Equal(t, base64.StdEncoding.EncodeToString([]byte(content)), got.Content)
	})
}

func TestRoundTripBinary(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		task := newTask()
		data := make([]byte, 200_000)
		_, _ = rand.Read(data)
		data[0], data[1] = 0, 0xff
		out, err := s.store(ctxT(t), StoreIn{TaskID: task, Name: "blob.bin", Content: base64.StdEncoding.EncodeToString(data), Encoding: "base64"})
		require.NoError(t, err)
		require.Equal(t, sha(data), out.SHA256)
		require.Equal(t, "application/octet-stream", out.ContentType)

		got, err := s.retrieve(ctxT(t), RetrieveIn{TaskID: task, Name: "blob.bin"})
		require.NoError(t, err)
		require.Equal(t, "base64", got.Encoding)
		back, err := base64.StdEncoding.DecodeString(got.Content)
		require.NoError(t, err)
		require.Equal(t, data, back)
		require.Equal(t, sha(data), got.SHA256)

		_, err = s.retrieve(ctxT(t), RetrieveIn{TaskID: task, Name: "blob.bin", Encoding: "text"})
		requireCode(t, err, toolerr.BinaryFile)
	})
}

// TestStoreCap: exactly the cap is stored, one byte more is refused and
// nothing appears, in both encodings.
func TestStoreCap(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		s = withCaps(s, 1024, 4096)
		task := newTask()
		for _, enc := range []string{"text", "base64"} {
			t.Run(enc, func(t *testing.T) {
				encode := func(n int) string {
					b := bytes.Repeat([]byte("a"), n)
					if enc == "base64" {
						return base64.StdEncoding.EncodeToString(b)
					}
					return string(b)
				}
				out, err := s.store(ctxT(t), StoreIn{TaskID: task, Name: "at-cap." + enc, Content: encode(1024), Encoding: enc})
				require.NoError(t, err)
				require.Equal(t, int64(1024), out.Size)
				_, err = s.store(ctxT(t), StoreIn{TaskID: task, Name: "over-cap." + enc, Content: encode(1025), Encoding: enc})
				te := requireCode(t, err, toolerr.TooLarge)
				require.Equal(t, "artifacts.max_store_bytes", te.Rule)
				requireAbsent(t, s, artifactkey.Key(task, "over-cap."+enc))
			})
		}
	})
}

// endless yields 'x' forever.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n += int64(len(p))
	return len(p), nil
}

// TestCapHoldsWhileStreaming: a body longer than announced is cut at the
// cap while it streams, and nothing is stored.
func TestCapHoldsWhileStreaming(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		s = withCaps(s, 64<<10, 4096)
		key := artifactkey.Key(newTask(), "stream.bin")
		src := &endless{}
		_, _, err := s.put(ctxT(t), key, src, 1<<20, "application/octet-stream", true)
		require.ErrorIs(t, err, errOverCap)
		require.LessOrEqual(t, src.n, int64(64<<10)+64<<10, "reading stopped near the cap, not at the announced size")
		requireAbsent(t, s, key)
	})
}

// failing yields n bytes, then an error, as a dropped client would.
type failing struct{ n int }

func (f *failing) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("connection dropped")
	}
	k := min(len(p), f.n)
	f.n -= k
	return k, nil
}

// TestPartialUploadNeverVisible: an upload that fails half-way leaves no
// object, and does not damage the one it was to replace.
func TestPartialUploadNeverVisible(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		task := newTask()
		key := artifactkey.Key(task, "half.bin")
		_, _, err := s.put(ctxT(t), key, &failing{n: 256 << 10}, 1<<20, "application/octet-stream", false)
		require.Error(t, err)
		requireAbsent(t, s, key)

		_, err = s.store(ctxT(t), StoreIn{TaskID: task, Name: "half.bin", Content: "old", Encoding: "text"})
		require.NoError(t, err)
		_, _, err = s.put(ctxT(t), key, &failing{n: 256 << 10}, 1<<20, "application/octet-stream", true)
		require.Error(t, err)
		got, err := s.retrieve(ctxT(t), RetrieveIn{Key: key})
		require.NoError(t, err)
		require.Equal(t, "old", got.Content)

		// Corrupt base64 past the first chunk fails the same way.
		bad := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("z"), 300_000))
		bad = bad[:200_000] + "!!!!" + bad[200_004:]
		_, err = s.store(ctxT(t), StoreIn{TaskID: task, Name: "corrupt.bin", Content: bad, Encoding: "base64"})
		requireCode(t, err, toolerr.InvalidArgument)
		requireAbsent(t, s, artifactkey.Key(task, "corrupt.bin"))
	})
}

func TestOverwrite(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		task := newTask()
		in := StoreIn{TaskID: task, Name: "notes.txt", Content: "first", Encoding: "text"}
		_, err := s.store(ctxT(t), in)
		require.NoError(t, err)

		in.Content = "second"
		_, err = s.store(ctxT(t), in)
		te := requireCode(t, err, toolerr.AlreadyExists)
		require.Equal(t, "artifacts.no_overwrite", te.Rule)
		got, err := s.retrieve(ctxT(t), RetrieveIn{TaskID: task, Name: "notes.txt"})
		require.NoError(t, err)
		require.Equal(t, "first", got.Content, "a refused store changes nothing")

		in.Overwrite = true
		out, err := s.store(ctxT(t), in)
		require.NoError(t, err)
		got, err = s.retrieve(ctxT(t), RetrieveIn{TaskID: task, Name: "notes.txt"})
		require.NoError(t, err)
		require.Equal(t, "second", got.Content)
		require.Equal(t, out.SHA256, got.SHA256)
	})
}

// TestNameAttacks: hostile names are refused before any request, and
// nothing is stored anywhere for the task.
func TestNameAttacks(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		task := newTask()
		names := []string{"../x", "..%2fx", "..%2Fsecrets", "a/b", `a\b`, "a\x00b", strings.Repeat("n", 300), ".hidden",
			"-rf", "..", "\uff0e\uff0e\uff0fx", "..\u2215x", "r\u0435port", "a\u202eb", "/etc/passwd", "", "x\n"}
		for _, name := range names {
			_, err := s.store(ctxT(t), StoreIn{TaskID: task, Name: name, Content: "pwned", Encoding: "text"})
			requireCode(t, err, toolerr.InvalidArgument)
			_, err = s.retrieve(ctxT(t), RetrieveIn{TaskID: task, Name: name})
			requireCode(t, err, toolerr.InvalidArgument)
		}
		list, err := s.list(ctxT(t), ListIn{TaskID: task})
		require.NoError(t, err)
		require.Empty(t, list.Artifacts)
		require.Empty(t, listKeys(t, s, minio.ListObjectsOptions{Prefix: "tasks/" + task + "/", Recursive: true}),
			"no object stored for a refused name")
		for _, key := range listKeys(t, s, minio.ListObjectsOptions{}) {
			require.Equal(t, "tasks/", key, "nothing is ever stored outside tasks/")
		}
	})
}

// TestCrossTaskKeyManipulation: task A's artifact cannot be reached by
// dressing up a key of task B.
func TestCrossTaskKeyManipulation(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		a, b := newTask(), newTask()
		_, err := s.store(ctxT(t), StoreIn{TaskID: a, Name: "secret.txt", Content: "task A only", Encoding: "text"})
		require.NoError(t, err)
		for _, in := range []RetrieveIn{
			{Key: "tasks/" + b + "/artifacts/../../" + a + "/artifacts/secret.txt"},
			{Key: "tasks/" + b + "/../" + a + "/artifacts/secret.txt"},
			{Key: "tasks/" + b + "/artifacts/..%2F..%2F" + a + "%2Fartifacts%2Fsecret.txt"},
			{Key: "/tasks/" + a + "/artifacts/secret.txt"},
			{Key: "tasks/" + a + "/artifacts/secret.txt", TaskID: b},
			{Key: "tasks/" + a + "/artifacts/secret.txt", Name: "secret.txt"},
			{TaskID: b, Name: "../../" + a + "/artifacts/secret.txt"},
			{TaskID: b + "/../" + a, Name: "secret.txt"},
			{TaskID: strings.ToUpper(a), Name: "secret.txt"},
		} {
			_, err := s.retrieve(ctxT(t), in)
			requireCode(t, err, toolerr.InvalidArgument)
		}
		_, err = s.retrieve(ctxT(t), RetrieveIn{TaskID: b, Name: "secret.txt"})
		requireCode(t, err, toolerr.NotFound)
	})
}

func TestRetrieveErrors(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		s = withCaps(s, 1<<20, 100)
		task := newTask()
		_, err := s.retrieve(ctxT(t), RetrieveIn{TaskID: task, Name: "missing.txt"})
		requireCode(t, err, toolerr.NotFound)
		_, err = s.retrieve(ctxT(t), RetrieveIn{})
		requireCode(t, err, toolerr.InvalidArgument)
		_, err = s.store(ctxT(t), StoreIn{TaskID: task, Name: "big.txt", Content: strings.Repeat("b", 101), Encoding: "text"})
		require.NoError(t, err)
		te := requireCode(t, func() error { _, err := s.retrieve(ctxT(t), RetrieveIn{TaskID: task, Name: "big.txt"}); return err }(), toolerr.TooLarge)
		require.Equal(t, "artifacts.max_inline_bytes", te.Rule)
		_, err = s.retrieve(ctxT(t), RetrieveIn{TaskID: task, Name: "big.txt", Encoding: "hex"})
		requireCode(t, err, toolerr.InvalidArgument)
	})
}

func TestList(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		task := newTask()
		names := []string{"a.txt", "b.txt", "c.txt", "d.txt", "e.txt"}
		for i, n := range names {
			_, err := s.store(ctxT(t), StoreIn{TaskID: task, Name: n, Content: strings.Repeat("x", i), Encoding: "text"})
			require.NoError(t, err)
		}
		// An object not made by store_artifact under the prefix is never listed.
		_, err := s.objects.Put(ctxT(t), artifactkey.Key(task, "sub/dir.txt"), strings.NewReader("x"), 1, minio.PutObjectOptions{})
		require.NoError(t, err)

		var got []string
		cursor := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 5)
			out, err := s.list(ctxT(t), ListIn{TaskID: task, Limit: 2, Cursor: cursor})
			require.NoError(t, err)
			require.LessOrEqual(t, len(out.Artifacts), 2)
			for _, a := range out.Artifacts {
				got = append(got, a.Name)
				require.Equal(t, artifactkey.Key(task, a.Name), a.Key)
				require.NotEmpty(t, a.Modified)
			}
			if !out.Truncated {
				require.Empty(t, out.NextCursor)
				break
			}
			cursor = out.NextCursor
		}
		require.Equal(t, names, got)

		out, err := s.list(ctxT(t), ListIn{TaskID: task})
		require.NoError(t, err)
		require.Len(t, out.Artifacts, 5)
		require.Equal(t, int64(4), out.Artifacts[4].Size)

		empty, err := s.list(ctxT(t), ListIn{TaskID: newTask()})
		require.NoError(t, err)
		require.NotNil(t, empty.Artifacts)
		require.Empty(t, empty.Artifacts)

		for _, in := range []ListIn{{TaskID: task, Cursor: "../x"}, {TaskID: task, Limit: -1}, {TaskID: task, Limit: 1_000_000}, {TaskID: "x"}} {
			_, err := s.list(ctxT(t), in)
			requireCode(t, err, toolerr.InvalidArgument)
		}
	})
}
