package stdio

import (
	"bytes"
	"io"
)

// MaxLineBytes bounds one JSON-RPC message on stdio.
const MaxLineBytes = 16 << 20

// oversizedLine replaces a dropped line: a harmless notification that the
// server ignores, so the stream stays in step.
var oversizedLine = []byte(`{"jsonrpc":"2.0","method":"notifications/toolwarden/oversized_message_dropped"}` + "\n")

// lineLimitReader passes lines through, but drops any line longer than max
// bytes instead of buffering it: mcp-go's stdio server reads a whole line
// into memory, so one endless line could exhaust it.
type lineLimitReader struct {
	r        io.Reader
	max      int
	lineLen  int  // bytes of the current line passed through so far
	dropping bool // inside an oversized line
	pending  []byte
}

func newLineLimitReader(r io.Reader, max int) *lineLimitReader {
	return &lineLimitReader{r: r, max: max}
}

func (l *lineLimitReader) Read(p []byte) (int, error) {
	if len(l.pending) > 0 {
		n := copy(p, l.pending)
		l.pending = l.pending[n:]
		return n, nil
	}
	buf := make([]byte, len(p))
	n, err := l.r.Read(buf)
	out := l.filter(buf[:n])
	m := copy(p, out)
	l.pending = append(l.pending[:0], out[m:]...)
	if m == 0 && err == nil {
		return l.Read(p)
	}
	return m, err
}

// filter returns what of chunk may pass, updating the line state.
func (l *lineLimitReader) filter(chunk []byte) []byte {
	var out []byte
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		seg, rest := chunk, []byte(nil)
		if i >= 0 {
			seg, rest = chunk[:i+1], chunk[i+1:]
		}
		switch {
		case l.dropping:
		case l.lineLen+len(seg) > l.max+1 || (i < 0 && l.lineLen+len(seg) > l.max):
			l.dropping = true
			out = append(out, '\n') // end whatever part was passed through
		default:
			out = append(out, seg...)
			l.lineLen += len(seg)
		}
		if i >= 0 {
			if l.dropping {
				out = append(out, oversizedLine...)
			}
			l.dropping, l.lineLen = false, 0
		}
		chunk = rest
	}
	return out
}
