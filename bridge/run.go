package bridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"
)

// ServerTokenEnv holds the --server-url bearer token, so that it need not
// be in argv.
const ServerTokenEnv = "TOOLWARDEN_SERVER_TOKEN"

// RunOptions are what `toolwarden gemini` was asked for, besides the
// server to drive and the prompt. The API key is never one of them: it
// comes from the environment (argv is visible to every user).
type RunOptions struct {
	Model, BaseURL, Session, CallingMode, Protocol string
	AllowedTools                                   []string
	MaxSteps, MaxContextTokens, Retries            int
	Timeout                                        time.Duration
	Parallel, Yes                                  bool
	// Spend prices the model's tokens and caps the run (from bridge.* in
	// the config and --max-cost); zero is unmetered.
	Spend Spend
	// APIKey reads the Gemini API key from where the config says
	// (bridge.api_key_env, _file or _vault); nil reads GEMINI_API_KEY,
	// else GOOGLE_API_KEY. The Opener may set it.
	APIKey func(context.Context) (string, error)
}

// Opener starts the MCP server to drive, with the context the run gives
// it: a Ctrl-C in the REPL cancels a turn, never that context. It returns
// the server, the log to use and how to close the server.
type Opener func(ctx context.Context) (Server, *slog.Logger, func(), error)

// Run is `toolwarden gemini`: one answer to prompt on stdout, or, with no
// prompt, the REPL on stdin, over the tools of the server open starts.
// open may fill in o.Spend from the config it loads.
func Run(ctx context.Context, o *RunOptions, prompt string, open Opener) error {
	var interrupts <-chan os.Signal
	started := func() {}
	if prompt == "" {
		// In the REPL, Ctrl-C cancels the turn in flight, not the session;
		// until the first prompt it ends the command.
		var stop func()
		ctx, interrupts, stop = replSignals(ctx)
		defer stop()
		ctx, started = untilStarted(ctx, interrupts)
	}
	srv, log, closeServer, err := open(ctx)
	if err != nil {
		return err
	}
	defer closeServer()
	key, err := o.apiKey(ctx)
	if err != nil {
		return err
	}
	if o.Yes {
		log.Warn("--yes: approval prompts will be accepted without asking; guard denials still apply")
	}
	in := NewInput(os.Stdin)
	approver := &Approver{In: in, Out: os.Stderr, Interactive: term.IsTerminal(int(os.Stdin.Fd())), Yes: o.Yes, Log: log}
	tools, err := Connect(ctx, srv, approver)
	if err != nil {
		// mcp-go does not wrap the context's error: a Ctrl-C while the
		// server starts is recognised by the context.
		if ctx.Err() != nil {
			return errors.New("interrupted")
		}
		return err
	}
	defer tools.Close()
	b, err := newRunBridge(ctx, *o, key, tools, log)
	if err != nil {
		return err
	}
	if prompt == "" {
		started()
		return interrupted(ctx, (&REPL{Bridge: b, In: in, Out: os.Stdout, Err: os.Stderr, Session: o.Session, Interrupt: interrupts}).Run(ctx))
	}
	defer reportSpend(b, log)
	answer, err := b.Ask(ctx, prompt)
	if err != nil {
		return interrupted(ctx, err)
	}
	fmt.Fprintln(os.Stdout, Printable(answer))
	if o.Session != "" {
		return b.History.Save(o.Session)
	}
	return nil
}

// reportSpend logs what a priced run spent.
func reportSpend(b *Bridge, log *slog.Logger) {
	if spent, currency := b.Spent(); currency != "" {
		log.Info("gemini spend", "spent", spent.String(), "currency", currency)
	}
}

// newRunBridge is the bridge Run drives: the Gemini client o names, with
// the history of o.Session when there is one.
func newRunBridge(ctx context.Context, o RunOptions, key string, tools *Toolbox, log *slog.Logger) (*Bridge, error) {
	baseURL := o.BaseURL
	if baseURL == "" {
		baseURL = os.Getenv("GOOGLE_GEMINI_BASE_URL")
	}
	retry := DefaultRetry()
	retry.Attempts = o.Retries
	model, err := NewGemini(ctx, GeminiConfig{APIKey: key, BaseURL: baseURL, Model: o.Model, Timeout: o.Timeout, Retry: retry})
	if err != nil {
		return nil, err
	}
	b, err := New(model, tools, Options{
		MaxSteps: o.MaxSteps, Parallel: o.Parallel, CallingMode: o.CallingMode, AllowedTools: o.AllowedTools,
		Protocol: o.Protocol, MaxContextTokens: o.MaxContextTokens, Spend: o.Spend,
	}, os.Stderr, log)
	if err != nil || o.Session == "" {
		return b, err
	}
	if b.History, err = LoadHistory(o.Session); err != nil {
		return nil, err
	}
	return b, nil
}

// replSignals detaches ctx from the Ctrl-C that cancels it (main's
// signal context) and delivers Ctrl-C on a channel instead; SIGTERM still
// ends the returned context.
func replSignals(parent context.Context) (context.Context, <-chan os.Signal, func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	interrupts, terms := make(chan os.Signal, 1), make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	signal.Notify(terms, syscall.SIGTERM)
	go func() {
		select {
		case <-terms:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, interrupts, func() {
		signal.Stop(interrupts)
		signal.Stop(terms)
		cancel()
	}
}

// untilStarted returns ctx, cancelled by an interrupt until started is
// called; from then on the interrupts are the REPL's. (ctx is the server's
// too, so it is not cancelled when the watch ends.)
func untilStarted(ctx context.Context, interrupts <-chan os.Signal) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case <-interrupts:
			cancel()
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		<-finished
	}
}

// interrupted reports Ctrl-C as such rather than as a context error.
func interrupted(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return errors.New("interrupted")
	}
	return err
}

// apiKey reads the API key: from o.APIKey's source, else the
// environment. The error names the source, never the key.
func (o *RunOptions) apiKey(ctx context.Context) (string, error) {
	key := firstEnv("GEMINI_API_KEY", "GOOGLE_API_KEY")
	if o.APIKey != nil {
		k, err := o.APIKey(ctx)
		if err != nil {
			return "", err
		}
		key = strings.TrimSpace(k)
	}
	if key == "" {
		return "", ErrNoAPIKey
	}
	return key, nil
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(os.Getenv(n)); v != "" {
			return v
		}
	}
	return ""
}
