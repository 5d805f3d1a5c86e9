package fs

import (
	"bytes"
	"context"
	"io"
	"math"
	"sync"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// sniffLen is how much of a file's start sniffBinary and readHead look
// at for a NUL byte.
const sniffLen = 8192

// heads recycles the buffers readHead reads into. read leaves files of
// poolCap bytes or more to readLines, which copies their lines once into
// the content; a file that grows past poolCap while it is read gets a
// buffer of its own.
var heads = sync.Pool{New: func() any { b := make([]byte, 0, poolCap); return &b }}

const poolCap = 64 * 1024

// readHead is readLines for in.Offset 0 of a small file, the common read:
// it reads what decides the answer (the cap plus one byte, and at least
// the sniffed head) into one recycled buffer and finds where the lines
// that fit end, instead of copying them out one by one. Its answers are
// readLines' (read_internal_test.go compares them). It holds no more than
// the cap, so it checks for cancellation once, before reading.
func readHead(ctx context.Context, r io.Reader, limit int, maxBytes int64, out *ReadFileOut) error {
	if ctx.Err() != nil {
		return toolerr.Wrap(ctx.Err(), toolerr.Canceled, "", "reading %q was cancelled", out.Path)
	}
	want := max(maxBytes, sniffLen)
	if want < math.MaxInt64 {
		want++ // one byte more tells whether anything follows the cap
	}
	pooled := heads.Get().(*[]byte)
	defer heads.Put(pooled)
	buf := (*pooled)[:0]
	if hint := min(max(out.SizeBytes, 0)+1, want); hint > int64(cap(buf)) {
		buf = make([]byte, 0, hint)
	}
	data := readUpTo(r, buf, want)
	if bytes.IndexByte(data[:min(len(data), sniffLen)], 0) >= 0 {
		return binaryErr(out.Path)
	}
	end := cutLines(data, limit, maxBytes, out)
	if !utf8.Valid(data[:end]) {
		return binaryErr(out.Path)
	}
	out.Content = string(data[:end])
	return nil
}

// cutLines returns how many bytes of data's whole lines (at most limit
// of them, when limit is set) fit in maxBytes, and sets out's line count
// and whether more follows. As in readLines, a first line longer than the
// cap is cut there (at a rune start), so that a caller paging through
// the file makes progress. data ends in a line without a newline either
// at the file's end or past the cap, where it never fits.
func cutLines(data []byte, limit int, maxBytes int64, out *ReadFileOut) int {
	end := len(data)
	if int64(end) > maxBytes {
		end = bytes.LastIndexByte(data[:maxBytes], '\n') + 1
	}
	out.Lines = bytes.Count(data[:end], newline)
	if end > 0 && data[end-1] != '\n' {
		out.Lines++ // the file's last line, without a newline
	}
	if limit > 0 && out.Lines > limit {
		end, out.Lines = 0, limit
		for range limit {
			end += bytes.IndexByte(data[end:], '\n') + 1
		}
	}
	if end < len(data) {
		out.Truncated, out.NextOffset = true, out.Lines
		if out.Lines == 0 {
			end, out.Lines, out.NextOffset = runeCut(data, int(maxBytes)), 1, 1
		}
	}
	return end
}

var newline = []byte{'\n'}

// readUpTo appends what r holds to buf, until its end or limit bytes in
// all. A read error ends the data early, as the end of the file would in
// readLines.
func readUpTo(r io.Reader, buf []byte, limit int64) []byte {
	for int64(len(buf)) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):min(int64(cap(buf)), limit)])
		buf = buf[:len(buf)+n]
		if err != nil || n == 0 {
			break
		}
	}
	return buf
}

// runeCut is the length of b cut to at most n bytes without splitting a
// rune.
func runeCut(b []byte, n int) int {
	if len(b) <= n {
		return len(b)
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return n
}
