package fs

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// headResult is what a read answers: the output, or the error's code.
type headResult struct {
	Out  ReadFileOut
	Code toolerr.Code
}

func answer(out ReadFileOut, err error) headResult {
	if err != nil {
		return headResult{Code: toolerr.As(err).Code}
	}
	return headResult{Out: out}
}

// viaLines is the answer of readLines, the line-by-line reader readHead
// replaces for reads from the start.
func viaLines(content string, limit int, maxBytes int64) headResult {
	out := ReadFileOut{Path: "f.txt", StartLine: 1, SizeBytes: int64(len(content))}
	err := readLines(context.Background(), strings.NewReader(content), ReadFileIn{Limit: limit}, maxBytes, &out)
	return answer(out, err)
}

// viaHead is readHead's answer, reading through wrap(r) with size as the
// size the file's stat reported.
func viaHead(content string, size int64, wrap func(io.Reader) io.Reader, limit int, maxBytes int64) headResult {
	out := ReadFileOut{Path: "f.txt", StartLine: 1, SizeBytes: size}
	err := readHead(context.Background(), wrap(strings.NewReader(content)), limit, maxBytes, &out)
	out.SizeBytes = int64(len(content))
	return answer(out, err)
}

var (
	headLimits   = []int{0, 1, 2, 3, 7, 100, 5000}
	headMaxBytes = []int64{1, 2, 3, 4, 5, 17, 64, 100, 4095, 4096, 8191, 8192, 8193, 16384, 16385, 40000, 1 << 20}
	// deliveries are how the file may deliver its bytes: at once, one byte
	// per read, half of what is asked, or with an error after the data.
	deliveries = map[string]func(io.Reader) io.Reader{
		"plain":   func(r io.Reader) io.Reader { return r },
		"onebyte": iotest.OneByteReader,
		"half":    iotest.HalfReader,
		"dataerr": iotest.DataErrReader,
	}
)

// requireSameAnswers checks that readHead answers as readLines does for
// content under every limit and cap, whatever size stat reported and
// however the reads deliver the bytes.
func requireSameAnswers(t *testing.T, name, content string, sizes ...int64) {
	t.Helper()
	n := int64(len(content))
	if len(sizes) == 0 {
		sizes = []int64{n, 0, n / 2, n + 100}
	}
	for _, limit := range headLimits {
		for _, maxBytes := range headMaxBytes {
			want := viaLines(content, limit, maxBytes)
			for rname, wrap := range deliveries {
				for _, size := range sizes {
					got := viaHead(content, size, wrap, limit, maxBytes)
					if got != want {
						require.Equal(t, want, got, "%s: limit=%d max=%d reader=%s size=%d", name, limit, maxBytes, rname, size)
					}
				}
			}
		}
	}
}

func TestReadHeadAnswersAsReadLines(t *testing.T) {
	cases := map[string]string{
		"empty":                  "",
		"one newline":            "\n",
		"one byte":               "a",
		"one rune":               "é",
		"blank lines":            "\n\n\n",
		"no trailing newline":    "a\nb",
		"crlf":                   "a\r\nb\r\n\r\nc",
		"lone cr":                "a\rb\rc\r",
		"runes":                  strings.Repeat("données é €\n日本語\n", 300),
		"euro long line":         strings.Repeat("€", 6000) + "\nnext\n",
		"long first line":        strings.Repeat("x", 20000) + "\n" + "y\n",
		"long line after short":  "short\n" + strings.Repeat("y", 30000) + "\nz",
		"nul at start":           "\x00text\n",
		"nul at 8191":            strings.Repeat("a", 8191) + "\x00\n",
		"nul at 8192":            strings.Repeat("a", 8192) + "\x00\n",
		"invalid utf8":           "caf\xe9\n",
		"invalid utf8 late":      strings.Repeat("ok\n", 5000) + "\xff\n",
		"rune split at 8192":     strings.Repeat("a", 8191) + "€\n",
		"many tiny lines":        strings.Repeat("x\n", 20000),
		"4 KiB bench file":       strings.Repeat("0123456789abcdef\n", 241),
		"exact 16 KiB lines":     strings.Repeat(strings.Repeat("q", 16383)+"\n", 3),
		"over the pooled buffer": strings.Repeat("0123456789abcdef\n", 6000),
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) { requireSameAnswers(t, name, content) })
	}
}

// TestReadHeadAnswersAsReadLinesRandom compares both over random files
// made of the pieces where line cutting goes wrong: newlines, CRs,
// multi-byte runes, invalid bytes, NULs, and runs long enough to cross
// the sniffed head and readLines' buffer.
func TestReadHeadAnswersAsReadLinesRandom(t *testing.T) {
	pieces := []string{"a", "bc", "\n", "\n", "\r\n", "\r", "é", "€", "日本", "\xff", "\x00",
		strings.Repeat("x", 100), strings.Repeat("y", 5000), strings.Repeat("z\n", 50)}
	rng := rand.New(rand.NewPCG(17, 2026))
	for i := range 100 {
		var b strings.Builder
		for range rng.IntN(40) {
			p := pieces[rng.IntN(len(pieces))]
			if p == "\x00" && rng.IntN(4) != 0 {
				continue // keep most files text
			}
			b.WriteString(p)
		}
		content := b.String()
		t.Run(fmt.Sprint(i), func(t *testing.T) { requireSameAnswers(t, fmt.Sprint(i), content, int64(len(content))) })
	}
}

// FuzzReadHead compares both on any content (go test -fuzz FuzzReadHead).
func FuzzReadHead(f *testing.F) {
	f.Add("a\nb\n", 0, int64(3))
	f.Add(strings.Repeat("€", 40)+"\n", 2, int64(64))
	f.Add("x\x00y", 0, int64(10))
	f.Fuzz(func(t *testing.T, content string, limit int, maxBytes int64) {
		if limit < 0 || maxBytes <= 0 || maxBytes > 1<<20 {
			t.Skip()
		}
		want := viaLines(content, limit, maxBytes)
		for rname, wrap := range deliveries {
			got := viaHead(content, int64(len(content)), wrap, limit, maxBytes)
			require.Equal(t, want, got, "reader=%s", rname)
		}
	})
}

func TestReadHeadCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := ReadFileOut{Path: "f.txt"}
	err := readHead(ctx, strings.NewReader("a\n"), 0, 64, &out)
	require.Equal(t, toolerr.Canceled, toolerr.As(err).Code)
}
