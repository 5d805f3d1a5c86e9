package upstream

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLineLimit: lines up to the cap pass whole, across reads or many in
// one; the first longer one fails the read, once, calls over, and nothing
// more is read; what the failing read returns ends at the cap.
func TestLineLimit(t *testing.T) {
	for _, chunk := range []int{1, 3, 7, 1000} {
		t.Run(fmt.Sprint(chunk), func(t *testing.T) {
			killed := 0
			src := strings.NewReader("short\n" + strings.Repeat("a", 10) + "\n" + strings.Repeat("b", 11) + "\nnever\n")
			l := &lineLimit{r: iotest{src, chunk}, max: 10, over: func() { killed++ }}
			br := bufio.NewReader(l)
			line, err := br.ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "short\n", line)
			line, err = br.ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, strings.Repeat("a", 10)+"\n", line)
			line, err = br.ReadString('\n')
			var tooLarge *MessageTooLargeError
			require.True(t, errors.As(err, &tooLarge), "%v", err)
			require.Equal(t, 10, tooLarge.Max)
			require.Equal(t, strings.Repeat("b", 10), line, "passed on up to the cap, not past it")
			_, err = br.ReadString('\n')
			require.Error(t, err)
			require.Equal(t, 1, killed)
		})
	}
}

// iotest reads at most n bytes at a time, as a pipe may.
type iotest struct {
	r io.Reader
	n int
}

func (r iotest) Read(p []byte) (int, error) { return r.r.Read(p[:min(len(p), r.n)]) }

// TestBackoff: delays double from about a second up to the cap, each in
// the upper half of its step; a process that lived long starts again.
func TestBackoff(t *testing.T) {
	var b backoff
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute}
	for _, w := range want {
		d := b.next(0)
		require.GreaterOrEqual(t, d, w/2)
		require.LessOrEqual(t, d, w)
	}
	require.LessOrEqual(t, b.next(restartStable), time.Second, "a process that lived restartStable starts the series again")
}

// BenchmarkLineLimit passes a 6 KiB answer through the cap, as one read.
func BenchmarkLineLimit(b *testing.B) {
	line := []byte(strings.Repeat("x", 6<<10) + "\n")
	p := make([]byte, 8<<10)
	r := bytes.NewReader(line)
	l := &lineLimit{r: r, max: DefaultMaxMessageBytes, over: func() {}}
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		r.Reset(line)
		if n, err := l.Read(p); n != len(line) || err != nil {
			b.Fatal(n, err)
		}
	}
}
