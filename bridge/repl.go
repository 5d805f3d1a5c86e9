package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// REPL is the interactive conversation: a prompt per line, and the
// commands /tools, /reset, /save FILE and /quit.
type REPL struct {
	Bridge  *Bridge
	In      *Input    // shared with the Approver
	Out     io.Writer // answers (stdout)
	Err     io.Writer // prompt, notices and errors (stderr)
	Session string    // --session file, saved after every turn; "" for none
	// Interrupt delivers Ctrl-C: during a turn it cancels that turn (the
	// model request, the tool call, an approval prompt) and the prompt
	// comes back; at the prompt it ends the REPL. nil: none.
	Interrupt <-chan os.Signal
}

const replHelp = "Commands: /tools, /reset, /save FILE, /quit. Anything else is sent to the model."

// Run reads prompts until /quit, end of input, Ctrl-C at the prompt or
// ctx ends.
func (r *REPL) Run(ctx context.Context) error {
	fmt.Fprintln(r.Err, "toolwarden gemini: "+replHelp)
	for {
		fmt.Fprint(r.Err, "> ")
		readCtx, stop := r.onInterrupt(ctx)
		line, err := r.In.ReadLine(readCtx)
		interrupted := stop()
		if err != nil {
			fmt.Fprintln(r.Err)
			if errors.Is(err, io.EOF) || (interrupted && ctx.Err() == nil) {
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

// onInterrupt returns ctx, cancelled also by the next interrupt; stop
// ends the watch and reports whether an interrupt came.
func (r *REPL) onInterrupt(ctx context.Context) (context.Context, func() bool) {
	ctx, cancel := context.WithCancel(ctx)
	done, finished := make(chan struct{}), make(chan struct{})
	var hit bool
	go func() {
		defer close(finished)
		select {
		case <-r.Interrupt:
			hit = true
			cancel()
		case <-done:
		}
	}()
	return ctx, func() bool {
		close(done)
		<-finished
		cancel()
		return hit
	}
}

// ask runs one prompt as a turn that Ctrl-C cancels.
func (r *REPL) ask(ctx context.Context, prompt string) error {
	turn, stop := r.onInterrupt(ctx)
	r.In.setTurn(turn)
	answer, err := r.Bridge.Ask(turn, prompt)
	r.In.setTurn(context.Background()) // no turn
	if interrupted := stop(); err != nil && interrupted && ctx.Err() == nil {
		// Ask left the history as it was before the prompt. Ctrl-C
		// pressed again while the turn was ending is not an exit.
		for len(r.Interrupt) > 0 {
			<-r.Interrupt
		}
		fmt.Fprintln(r.Err, "interrupted")
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(r.Out, Printable(answer))
	return r.save()
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
			fmt.Fprintf(r.Out, "%s — %s\n", visible(t.Name), visible(desc))
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
		return false, r.ask(ctx, line)
	}
	return false, nil
}

func (r *REPL) save() error {
	if r.Session == "" {
		return nil
	}
	return r.Bridge.History.Save(r.Session)
}
