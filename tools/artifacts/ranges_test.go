package artifacts

import (
	"bytes"
	"encoding/base64"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

func ptr(n int64) *int64 { return &n }

// TestRangedReadsBackLargeArtifact: an artifact over max_inline_bytes is
// refused whole and read back in ranges that follow next_offset; the bytes
// put together hash to what store_artifact reported.
func TestRangedReadsBackLargeArtifact(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		require.Equal(t, int64(256<<10), s.limits.MaxInlineBytes, "the default this test is sized for")
		data := make([]byte, 600<<10)
		r := rand.NewChaCha8([32]byte{1})
		_, _ = r.Read(data)
		task := newTask()
		stored, err := s.store(ctxT(t), StoreIn{TaskID: task, Name: "big.bin", Content: base64.StdEncoding.EncodeToString(data), Encoding: "base64"})
		require.NoError(t, err)

		_, err = s.retrieve(ctxT(t), RetrieveIn{TaskID: task, Name: "big.bin"})
		te := requireCode(t, err, toolerr.TooLarge)
		require.Equal(t, "artifacts.max_inline_bytes", te.Rule)
		require.Contains(t, te.Hint, "offset")

		var back []byte
		var ranges int
		for off := int64(0); ; {
			ranges++
			out, err := s.retrieve(ctxT(t), RetrieveIn{TaskID: task, Name: "big.bin", Offset: ptr(off)})
			require.NoError(t, err)
			require.Equal(t, int64(len(data)), out.Size)
			require.Equal(t, off, out.Offset)
			require.Equal(t, stored.ETag, out.ETag)
			require.Equal(t, "base64", out.Encoding)
			chunk, err := base64.StdEncoding.DecodeString(out.Content)
			require.NoError(t, err)
			require.Equal(t, out.Length, int64(len(chunk)))
			back = append(back, chunk...)
			if !out.Truncated {
				require.Zero(t, out.NextOffset)
				require.Empty(t, out.SHA256, "a range is not the whole artifact")
				break
			}
			require.Equal(t, off+out.Length, out.NextOffset)
			off = out.NextOffset
		}
		require.Equal(t, 3, ranges, "three ranges: 256 KiB, 256 KiB, 88 KiB")
		require.Equal(t, stored.SHA256, sha(back))
	})
}

// TestRangedTextKeepsCharacters: a range ending inside a UTF-8 character
// ends before it, so every range of a text artifact is text.
func TestRangedTextKeepsCharacters(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		task := newTask()
		text := strings.Repeat("aé€😀", 50)
		_, err := s.store(ctxT(t), StoreIn{TaskID: task, Name: "t.txt", Content: text, Encoding: "text"})
		require.NoError(t, err)
		var back strings.Builder
		for off := int64(0); ; {
			out, err := s.retrieve(ctxT(t), RetrieveIn{TaskID: task, Name: "t.txt", Offset: ptr(off), Length: ptr(7), Encoding: "text"})
			require.NoError(t, err)
			require.Equal(t, "text", out.Encoding)
			back.WriteString(out.Content)
			if !out.Truncated {
				break
			}
			require.Positive(t, out.Length)
			off = out.NextOffset
		}
		require.Equal(t, text, back.String())

		whole, err := s.retrieve(ctxT(t), RetrieveIn{TaskID: task, Name: "t.txt", Offset: ptr(0)})
		require.NoError(t, err)
		require.False(t, whole.Truncated)
		require.Equal(t, sha([]byte(text)), whole.SHA256, "a range holding all of it is hashed")

		end, err := s.retrieve(ctxT(t), RetrieveIn{TaskID: task, Name: "t.txt", Offset: ptr(int64(len(text)))})
		require.NoError(t, err, "reading at the very end gives nothing, not an error")
		require.Equal(t, int64(0), end.Length)
		require.False(t, end.Truncated)
	})
}

// TestHostileRanges: every bad range is refused with the rule it breaks,
// before or without returning any byte.
func TestHostileRanges(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		task := newTask()
		_, err := s.store(ctxT(t), StoreIn{TaskID: task, Name: "r.txt", Content: "0123456789", Encoding: "text"})
		require.NoError(t, err)
		for name, c := range map[string]struct {
			offset, length *int64
			code           toolerr.Code
			rule, says     string
		}{
			"negative offset":     {ptr(-1), nil, toolerr.InvalidArgument, "artifacts.range", "negative"},
			"min int offset":      {ptr(math.MinInt64), ptr(1), toolerr.InvalidArgument, "artifacts.range", "negative"},
			"zero length":         {ptr(0), ptr(0), toolerr.InvalidArgument, "artifacts.range", "below 1"},
			"negative length":     {nil, ptr(-5), toolerr.InvalidArgument, "artifacts.range", "below 1"},
			"offset past the end": {ptr(11), nil, toolerr.InvalidArgument, "artifacts.range", "past the end of the artifact, which is 10 bytes"},
			"huge offset":         {ptr(1 << 62), ptr(10), toolerr.InvalidArgument, "artifacts.range", "past the end"},
			"max offset":          {ptr(math.MaxInt64), ptr(1), toolerr.InvalidArgument, "artifacts.range", "past the end"},
			"max offset, max len": {ptr(math.MaxInt64 - 5), ptr(256 << 10), toolerr.InvalidArgument, "artifacts.range", "past the end"},
			"huge length":         {ptr(0), ptr(1 << 40), toolerr.TooLarge, "artifacts.max_inline_bytes", "over the"},
			"max length":          {nil, ptr(math.MaxInt64), toolerr.TooLarge, "artifacts.max_inline_bytes", "over the"},
		} {
			t.Run(name, func(t *testing.T) {
				out, err := s.retrieve(ctxT(t), RetrieveIn{TaskID: task, Name: "r.txt", Offset: c.offset, Length: c.length})
				te := requireCode(t, err, c.code)
				require.Equal(t, c.rule, te.Rule)
				require.Contains(t, te.Message, c.says)
				require.Empty(t, out.Content)
			})
		}
	})
}

func TestTextCut(t *testing.T) {
	for in, want := range map[string]string{
		"abc": "abc", "ab\xe2\x82": "ab", "ab\xf0\x9f\x98": "ab", "ab€": "ab€",
		"\xe2\x82": "\xe2\x82", "\xff\xfe\xe2\x82": "\xff\xfe\xe2\x82", "": "",
	} {
		require.Equal(t, []byte(want), textCut([]byte(in)), "%q", in)
	}
	require.True(t, bytes.Equal(textCut(nil), nil))
}
