package bridge

import (
	"bufio"
	"context"
	"io"
	"sync"
)

// Input is the user's line input, shared by the REPL and the Approver. A
// read given up (Ctrl-C) is not lost: the line it was waiting for goes to
// the next reader, never to a reader nobody waits for any more. One
// reader at a time.
type Input struct {
	r       *bufio.Reader
	mu      sync.Mutex
	pending chan lineResult // a read in flight, or nil
	turn    context.Context // the REPL turn in progress: reads end with it
}

type lineResult struct {
	s   string
	err error
}

// NewInput reads lines from r.
func NewInput(r io.Reader) *Input { return &Input{r: bufio.NewReader(r)} }

// ReadLine reads one line, giving up when ctx or the current turn ends.
func (in *Input) ReadLine(ctx context.Context) (string, error) {
	in.mu.Lock()
	if in.pending == nil {
		ch := make(chan lineResult, 1)
		in.pending = ch
		go func() {
			s, err := in.r.ReadString('\n')
			ch <- lineResult{s, err}
		}()
	}
	ch, turn := in.pending, in.turn
	in.mu.Unlock()
	var turnDone <-chan struct{}
	if turn != nil {
		turnDone = turn.Done()
	}
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case <-turnDone:
		return "", turn.Err()
	case l := <-ch:
		in.mu.Lock()
		in.pending = nil
		in.mu.Unlock()
		if l.err != nil && l.s == "" {
			return "", l.err
		}
		return l.s, nil
	}
}

// setTurn makes reads end with ctx (Background: no turn), so that an approval
// prompt of a turn the user interrupted stops waiting, whatever context
// the MCP client gave it.
func (in *Input) setTurn(ctx context.Context) {
	in.mu.Lock()
	in.turn = ctx
	in.mu.Unlock()
}
