package egress

import (
	"bytes"
	"io"
)

// guard passes a stream through and fails with hit as soon as one of
// needles appears in it. It holds back the last len(needle)-1 bytes until
// it knows they start no match, so no part of a match is ever passed on.
type guard struct {
	r       io.Reader
	needles [][]byte
	keep    int
	hit     error
	tripped bool

	chunk   []byte
	pending []byte // read, not yet cleared
	out     []byte // cleared, not yet returned
	err     error
}

func newGuard(r io.Reader, needles []string, hit error) *guard {
	g := &guard{r: r, hit: hit, chunk: make([]byte, 32<<10)}
	for _, n := range needles {
		g.needles = append(g.needles, []byte(n))
		g.keep = max(g.keep, len(n)-1)
	}
	return g
}

func (g *guard) Read(p []byte) (int, error) {
	for len(g.out) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		n, err := g.r.Read(g.chunk)
		g.pending = append(g.pending, g.chunk[:n]...)
		for _, nd := range g.needles {
			if bytes.Contains(g.pending, nd) {
				g.tripped, g.err, g.pending = true, g.hit, nil
				return 0, g.hit
			}
		}
		switch cut := len(g.pending) - g.keep; {
		case err != nil:
			g.out, g.pending, g.err = g.pending, nil, err
		case cut > 0:
			g.out = append([]byte(nil), g.pending[:cut]...)
			g.pending = append(g.pending[:0], g.pending[cut:]...)
		}
	}
	n := copy(p, g.out)
	g.out = g.out[n:]
	return n, nil
}

func (g *guard) Close() error {
	if c, ok := g.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
