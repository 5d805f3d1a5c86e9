package bridge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// REPL is the interactive conversation: a prompt per line, and the
// commands /tools, /reset, /save FILE and /quit.
type REPL struct {
	Bridge  *Bridge
	In      *bufio.Reader // shared with the Approver
	Out     io.Writer     // answers (stdout)
	Err     io.Writer     // prompt, notices and errors (stderr)
	Session string        // --session file, saved after every turn; "" for none
}

const replHelp = "Commands: /tools, /reset, /save FILE, /quit. Anything else is sent to the model."

// Run reads prompts until /quit, end of input or ctx ends.
func (r *REPL) Run(ctx context.Context) error {
	fmt.Fprintln(r.Err, "toolwarden gemini: "+replHelp)
	for {
		fmt.Fprint(r.Err, "> ")
		line, err := readLine(ctx, r.In)
		if err != nil {
			fmt.Fprintln(r.Err)
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		line = strings.TrimSpace(line)
		quit, err := r.handle(ctx, line)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintln(r.Err, "error:", err)
		}
		if quit {
			return nil
		}
	}
}

// handle runs one line: a command or a prompt.
func (r *REPL) handle(ctx context.Context, line string) (quit bool, err error) {
	cmd, arg, _ := strings.Cut(line, " ")
	switch {
	case line == "":
		return false, nil
	case cmd == "/quit" || cmd == "/exit":
		return true, nil
	case cmd == "/help":
		fmt.Fprintln(r.Err, replHelp)
	case cmd == "/tools":
		for _, t := range r.Bridge.Tools() {
			desc, _, _ := strings.Cut(t.Description, "\n")
			fmt.Fprintf(r.Out, "%s — %s\n", t.Name, desc)
		}
	case cmd == "/reset":
		r.Bridge.History.Reset()
		fmt.Fprintln(r.Err, "conversation cleared")
		return false, r.save()
	case cmd == "/save":
		if strings.TrimSpace(arg) == "" {
			return false, errors.New("/save needs a file name")
		}
		if err := r.Bridge.History.Save(strings.TrimSpace(arg)); err != nil {
			return false, err
		}
		fmt.Fprintln(r.Err, "saved to", strings.TrimSpace(arg))
	case strings.HasPrefix(cmd, "/"):
		return false, fmt.Errorf("unknown command %s; %s", cmd, replHelp)
	default:
		answer, err := r.Bridge.Ask(ctx, line)
		if err != nil {
			return false, err
		}
		fmt.Fprintln(r.Out, answer)
		return false, r.save()
	}
	return false, nil
}

func (r *REPL) save() error {
	if r.Session == "" {
		return nil
	}
	return r.Bridge.History.Save(r.Session)
}

// readLine reads one line, giving up when ctx ends (Ctrl-C). The reading
// goroutine is left behind then; the process is about to end.
func readLine(ctx context.Context, in *bufio.Reader) (string, error) {
	type line struct {
		s   string
		err error
	}
	ch := make(chan line, 1)
	go func() {
		s, err := in.ReadString('\n')
		ch <- line{s, err}
	}()
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case l := <-ch:
		if l.err != nil && l.s == "" {
			return "", l.err
		}
		return l.s, nil
	}
}
