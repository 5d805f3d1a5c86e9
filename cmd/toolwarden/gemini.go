package main

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

	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/bridge"
	"github.com/toolwarden/toolwarden/mcpserver"
	"golang.org/x/term"
)

// geminiFlags are the bridge's own flags; the API key is never one
// (argv is visible to every user of the machine).
type geminiFlags struct {
	model, baseURL, serverCmd, serverURL, serverToken string
	session, callingMode, protocol                    string
	allowedTools                                      []string
	maxSteps, maxContextTokens, retries               int
	timeout                                           time.Duration
	parallel, yes                                     bool
}

// serverTokenEnv holds the --server-url bearer token, so that it need not
// be in argv.
const serverTokenEnv = "TOOLWARDEN_SERVER_TOKEN"

func newGeminiCmd() *cobra.Command {
	f := &configFlags{}
	g := &geminiFlags{}
	cmd := &cobra.Command{
		Use:   "gemini [flags] [PROMPT]",
		Short: "Talk to Gemini with toolwarden's guarded tools: one-shot with a PROMPT, interactive without",
		Long: "Drives Gemini function calling against an MCP server's tools: toolwarden's own, in-process, by default " +
			"(same config and workspace flags as serve), or any stdio (--server-cmd) or streamable-HTTP (--server-url) server.\n" +
			"The API key comes from GEMINI_API_KEY or GOOGLE_API_KEY.",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGemini(cmd, f, g, strings.TrimSpace(strings.Join(args, " ")))
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&g.model, "model", "gemini-2.5-flash", "Gemini model")
	fl.StringVar(&g.baseURL, "base-url", "", "Gemini API endpoint (default $GOOGLE_GEMINI_BASE_URL, else Google's)")
	fl.StringVar(&g.serverCmd, "server-cmd", "", `drive this stdio MCP server instead of the in-process one, e.g. "toolwarden serve --workspace DIR"`)
	fl.StringVar(&g.serverURL, "server-url", "", "drive this streamable-HTTP MCP server instead of the in-process one")
	fl.StringVar(&g.serverToken, "server-token", "", "bearer token for --server-url (prefer $"+serverTokenEnv+": argv is visible to other users)")
	fl.StringVar(&g.session, "session", "", "JSON file the conversation is resumed from and saved to after every turn")
	fl.StringVar(&g.callingMode, "calling-mode", "auto", "function calling mode: auto, any, none or validated")
	fl.StringSliceVar(&g.allowedTools, "allowed-tools", nil, "restrict function calls to these tools (with --calling-mode any or validated)")
	fl.StringVar(&g.protocol, "protocol", bridge.ProtocolFunctions, "functions (native function calling) or json-block (fenced JSON in text)")
	fl.IntVar(&g.maxSteps, "max-steps", 20, "model requests per prompt before giving up")
	fl.IntVar(&g.maxContextTokens, "max-context-tokens", 200000, "history budget in (estimated) tokens; oldest turns are left out first, 0 for none")
	fl.IntVar(&g.retries, "retries", 5, "attempts per model request on 429, 500, 503 and network errors")
	fl.DurationVar(&g.timeout, "timeout", 2*time.Minute, "time limit of one model request")
	fl.BoolVar(&g.parallel, "parallel", false, "run the read-only calls of one model turn concurrently")
	fl.BoolVar(&g.yes, "yes", false, "accept every approval prompt without asking (logged); never overrides a guard denial")
	return cmd
}

func runGemini(cmd *cobra.Command, f *configFlags, g *geminiFlags, prompt string) error {
	ctx := cmd.Context()
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
	key := firstEnv("GEMINI_API_KEY", "GOOGLE_API_KEY")
	if key == "" {
		return bridge.ErrNoAPIKey
	}
	if g.serverCmd != "" && g.serverURL != "" {
		return errors.New("--server-cmd and --server-url exclude each other")
	}
	if g.serverToken != "" && g.serverURL == "" {
		return errors.New("--server-token needs --server-url")
	}
	srv, log, closeServer, err := geminiServer(ctx, cmd, f, g)
	if err != nil {
		return err
	}
	defer closeServer()
	if g.yes {
		log.Warn("--yes: approval prompts will be accepted without asking; guard denials still apply")
	}
	in := bridge.NewInput(os.Stdin)
	approver := &bridge.Approver{In: in, Out: os.Stderr, Interactive: term.IsTerminal(int(os.Stdin.Fd())), Yes: g.yes, Log: log}
	tools, err := bridge.Connect(ctx, srv, approver)
	if err != nil {
		// mcp-go does not wrap the context's error: a Ctrl-C while the
		// server starts is recognised by the context.
		if ctx.Err() != nil {
			return errors.New("interrupted")
		}
		return err
	}
	defer tools.Close()
	b, err := newBridge(ctx, g, key, tools, log)
	if err != nil {
		return err
	}
	if prompt == "" {
		started()
		return interrupted(ctx, (&bridge.REPL{Bridge: b, In: in, Out: os.Stdout, Err: os.Stderr, Session: g.session, Interrupt: interrupts}).Run(ctx))
	}
	answer, err := b.Ask(ctx, prompt)
	if err != nil {
		return interrupted(ctx, err)
	}
	fmt.Fprintln(os.Stdout, bridge.Printable(answer))
	if g.session != "" {
		return b.History.Save(g.session)
	}
	return nil
}

// geminiServer is the MCP server to drive: toolwarden's own, built like
// serve builds it, unless --server-cmd or --server-url names another.
func geminiServer(ctx context.Context, cmd *cobra.Command, f *configFlags, g *geminiFlags) (bridge.Server, *slog.Logger, func(), error) {
	if g.serverCmd != "" || g.serverURL != "" {
		// The policy flags would configure a server that is not used; the
		// user must not believe they narrowed what the other one allows.
		for _, name := range []string{"config", "workspace", "allow", "deny"} {
			if cmd.Flags().Changed(name) {
				return bridge.Server{}, nil, nil, fmt.Errorf("--%s configures the in-process server; with --server-cmd or --server-url, configure that server instead", name)
			}
		}
		token := g.serverToken
		if token == "" {
			token = os.Getenv(serverTokenEnv)
		}
		return bridge.Server{Command: g.serverCmd, URL: g.serverURL, Token: token, Stderr: os.Stderr}, mcpserver.NewLogger("info"), func() {}, nil
	}
	l, err := f.load(cmd)
	if err != nil {
		return bridge.Server{}, nil, nil, err
	}
	srv, err := mcpserver.OpenInProcess(ctx, l)
	if err != nil {
		return bridge.Server{}, nil, nil, err
	}
	return bridge.Server{InProcess: srv.MCP}, srv.Log, srv.Close, nil
}

func newBridge(ctx context.Context, g *geminiFlags, key string, tools *bridge.Toolbox, log *slog.Logger) (*bridge.Bridge, error) {
	baseURL := g.baseURL
	if baseURL == "" {
		baseURL = os.Getenv("GOOGLE_GEMINI_BASE_URL")
	}
	retry := bridge.DefaultRetry()
	retry.Attempts = g.retries
	model, err := bridge.NewGemini(ctx, bridge.GeminiConfig{APIKey: key, BaseURL: baseURL, Model: g.model, Timeout: g.timeout, Retry: retry})
	if err != nil {
		return nil, err
	}
	b, err := bridge.New(model, tools, bridge.Options{
		MaxSteps: g.maxSteps, Parallel: g.parallel, CallingMode: g.callingMode, AllowedTools: g.allowedTools,
		Protocol: g.protocol, MaxContextTokens: g.maxContextTokens,
	}, os.Stderr, log)
	if err != nil || g.session == "" {
		return b, err
	}
	if b.History, err = bridge.LoadHistory(g.session); err != nil {
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

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(os.Getenv(n)); v != "" {
			return v
		}
	}
	return ""
}
