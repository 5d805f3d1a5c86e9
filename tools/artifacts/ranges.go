package artifacts

import (
	"math"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// byteRange is the part of an artifact retrieve_artifact reads: length
// bytes from offset. whole is a read without offset or length, which is
// refused rather than cut when the artifact is over max_inline_bytes, so
// that a caller unaware of ranges (a resources/read) never gets part of an
// artifact as if it were all of it.
type byteRange struct {
	offset, length int64
	whole          bool
}

// rangeOf checks the requested range against the rules that need no size.
func (s *Store) rangeOf(in RetrieveIn) (byteRange, error) {
	limit := s.limits.MaxInlineBytes
	if in.Offset == nil && in.Length == nil {
		return byteRange{length: limit, whole: true}, nil
	}
	r := byteRange{length: limit}
	if in.Offset != nil {
		r.offset = *in.Offset
	}
	if in.Length != nil {
		r.length = *in.Length
	}
	switch {
	case r.offset < 0:
		return r, rangeError("offset %d is negative; offsets count bytes from 0", r.offset)
	case r.length < 1:
		return r, rangeError("length %d is below 1", r.length)
	case r.length > limit:
		return r, toolerr.New(toolerr.TooLarge, "Ask for at most artifacts.max_inline_bytes bytes at a time, and continue with offset=next_offset.",
			"length %d is over the %d bytes returned at a time", r.length, limit).WithRule("artifacts.max_inline_bytes")
	case r.offset == math.MaxInt64:
		return r, rangeError("offset %d is past the end of the artifact", r.offset)
	}
	r.length = min(r.length, math.MaxInt64-r.offset) // offset+length must not overflow
	return r, nil
}

// checkRange holds r to the artifact's size.
func (s *Store) checkRange(r byteRange, size int64) error {
	switch {
	case r.whole && size > s.limits.MaxInlineBytes:
		return toolerr.New(toolerr.TooLarge, "Read it in ranges: pass offset 0 and continue with offset=next_offset while truncated is true.",
			"the artifact is %d bytes; at most %d are returned at a time", size, s.limits.MaxInlineBytes).WithRule("artifacts.max_inline_bytes")
	case r.offset > size:
		return rangeError("offset %d is past the end of the artifact, which is %d bytes", r.offset, size)
	}
	return nil
}

// more tells whether bytes of an artifact of size follow n bytes read at r.
func (r byteRange) more(size int64, n int) bool { return r.offset+int64(n) < size }

func rangeError(format string, args ...any) error {
	return toolerr.New(toolerr.InvalidArgument, "Pass an offset from 0 up to the artifact's size and a length of at least 1; leave both out to read a small artifact whole.",
		format, args...).WithRule("artifacts.range")
}

// textCut drops an incomplete UTF-8 character at the end of a range, so
// that a text artifact read in ranges stays text in every range; next_offset
// then starts at that character. Bytes that are not UTF-8 anyway are kept.
func textCut(data []byte) []byte {
	for i := len(data) - 1; i >= 0 && i >= len(data)-utf8.UTFMax; i-- {
		if utf8.RuneStart(data[i]) {
			if i > 0 && !utf8.FullRune(data[i:]) && utf8.Valid(data[:i]) {
				return data[:i]
			}
			break
		}
	}
	return data
}
