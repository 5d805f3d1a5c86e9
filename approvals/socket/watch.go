package socket

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"
)

// watchHeadBytes is how much of an action watch prints; the page and
// `approvals list --json` show all of it.
const watchHeadBytes = 4 << 10

// Watch asks, one call at a time, whether to approve each call waiting on
// the servers of socks, reading y or n lines from in, until in ends or ctx
// does. A call that ends while asked is dropped, nothing decided.
func Watch(ctx context.Context, socks []string, in io.Reader, out io.Writer) error {
	events := make(chan Pending)
	for _, s := range socks {
		c, err := Dial(s)
		if errors.Is(err, syscall.ECONNREFUSED) {
			continue // the socket of a server that was killed
		}
		if err != nil {
			return err
		}
		defer c.Close()
		if err := c.Watch(); err != nil {
			return err
		}
		go forward(ctx, c, events)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			lines <- strings.TrimSpace(strings.ToLower(sc.Text()))
		}
	}()
	fmt.Fprintf(out, "Watching %d server(s) for calls that wait for approval; Ctrl-D ends.\n", len(socks))
	w := &watcher{out: out}
	for {
		w.askNext()
		select {
		case <-ctx.Done():
			return nil
		case p := <-events:
			w.event(p)
		case line, ok := <-lines:
			if !ok {
				return nil
			}
			w.answer(line)
		}
	}
}

// forward delivers a server's events, tagged with the server.
func forward(ctx context.Context, c *Client, events chan<- Pending) {
	for {
		r, err := c.Next()
		if err != nil || r.Event == nil {
			if ctx.Err() == nil {
				select {
				case events <- Pending{socket: c.Socket, lost: true}:
				case <-ctx.Done():
				}
			}
			return
		}
		p := Pending{Server: ServerName(c.Socket), Request: r.Event.Request, socket: c.Socket}
		p.done = r.Event.Kind == "done"
		select {
		case events <- p:
		case <-ctx.Done():
			return
		}
	}
}

// watcher is Watch's state: the calls to ask about, and the one asked.
type watcher struct {
	out   io.Writer
	queue []Pending
	asked *Pending
}

func (w *watcher) event(p Pending) {
	if p.lost {
		fmt.Fprintf(w.out, "\nlost the connection to server %s; run watch again to see its calls.\n", ServerName(p.socket))
		return
	}
	if p.done {
		if w.asked != nil && w.asked.ID == p.ID && w.asked.socket == p.socket {
			fmt.Fprintf(w.out, "\n%s ended before a decision (answered elsewhere, expired, or cancelled); nothing decided.\n", oneLine(p.ID))
			w.asked = nil
		}
		for i, q := range w.queue {
			if q.ID == p.ID && q.socket == p.socket {
				w.queue = append(w.queue[:i], w.queue[i+1:]...)
				break
			}
		}
		return
	}
	w.queue = append(w.queue, p)
}

func (w *watcher) askNext() {
	if w.asked != nil || len(w.queue) == 0 {
		return
	}
	p := w.queue[0]
	w.queue = w.queue[1:]
	w.asked = &p
	head, more := p.Preview, 0
	if len(head) > watchHeadBytes {
		head, more = head[:watchHeadBytes], len(head)-watchHeadBytes
	}
	fmt.Fprintf(w.out, "\n── approval %s (server %s)\ntool:     %s\nidentity: %s\nsession:  %s\nexpires:  in %s\n\n%s\n",
		oneLine(p.ID), oneLine(p.Server), oneLine(p.Tool), oneLine(orLocal(p.Identity)), oneLine(p.Session),
		time.Until(p.Expires).Round(time.Second), lines(head))
	if more > 0 {
		fmt.Fprintf(w.out, "… %d more bytes not shown (toolwarden approvals list --json, or the approval page, shows all)\n", more)
	}
	fmt.Fprint(w.out, "Approve this call? [y/n] ")
}

func (w *watcher) answer(line string) {
	if w.asked == nil {
		return
	}
	var approve bool
	switch line {
	case "y", "yes":
		approve = true
	case "n", "no":
	default:
		fmt.Fprint(w.out, "Please answer y or n: ")
		return
	}
	p := *w.asked
	w.asked = nil
	c, err := Dial(p.socket)
	if err == nil {
		err = c.Decide(p.ID, p.Digest, approve, "")
		c.Close()
	}
	switch {
	case err != nil:
		fmt.Fprintf(w.out, "%s: not decided: %v\n", oneLine(p.ID), err)
	case approve:
		fmt.Fprintf(w.out, "%s approved.\n", oneLine(p.ID))
	default:
		fmt.Fprintf(w.out, "%s denied.\n", oneLine(p.ID))
	}
}
