package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/bridge"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/money"
	"github.com/toolwarden/toolwarden/mcpserver"
)

// geminiFlags are the bridge's own flags; the API key is never one
// (argv is visible to every user of the machine).
type geminiFlags struct {
	bridge.RunOptions
	serverCmd, serverURL, serverToken string
	maxCost, bridgeConfig             string
	metricsAddr                       string
	metricsRemote                     bool
}

func newGeminiCmd() *cobra.Command {
	f := &configFlags{}
	g := &geminiFlags{}
	cmd := &cobra.Command{
		Use:   "gemini [flags] [PROMPT]",
		Short: "Talk to Gemini with toolwarden's guarded tools: one-shot with a PROMPT, interactive without",
		Long: "Drives Gemini function calling against an MCP server's tools: toolwarden's own, in-process, by default " +
			"(same config and workspace flags as serve), or any stdio (--server-cmd) or streamable-HTTP (--server-url) server.\n" +
			"The API key comes from bridge.api_key_env, _file or _vault in the config (or --bridge-config), else GEMINI_API_KEY or GOOGLE_API_KEY.",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGemini(cmd, f, g, strings.TrimSpace(strings.Join(args, " ")))
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&g.Model, "model", "gemini-2.5-flash", "Gemini model")
	fl.StringVar(&g.BaseURL, "base-url", "", "Gemini API endpoint (default $GOOGLE_GEMINI_BASE_URL, else Google's)")
	fl.StringVar(&g.serverCmd, "server-cmd", "", `drive this stdio MCP server instead of the in-process one, e.g. "toolwarden serve --workspace DIR"`)
	fl.StringVar(&g.serverURL, "server-url", "", "drive this streamable-HTTP MCP server instead of the in-process one")
	fl.StringVar(&g.serverToken, "server-token", "", "bearer token for --server-url (prefer $"+bridge.ServerTokenEnv+": argv is visible to other users)")
	fl.StringVar(&g.Session, "session", "", "JSON file the conversation is resumed from and saved to after every turn")
	fl.StringVar(&g.CallingMode, "calling-mode", "auto", "function calling mode: auto, any, none or validated")
	fl.StringSliceVar(&g.AllowedTools, "allowed-tools", nil, "restrict function calls to these tools (with --calling-mode any or validated)")
	fl.StringVar(&g.Protocol, "protocol", bridge.ProtocolFunctions, "functions (native function calling) or json-block (fenced JSON in text)")
	fl.IntVar(&g.MaxSteps, "max-steps", 20, "model requests per prompt before giving up")
	fl.IntVar(&g.MaxContextTokens, "max-context-tokens", 200000, "history budget in tokens (countTokens); the oldest turns are summarised by the model when it is passed, 0 for none")
	fl.IntVar(&g.Retries, "retries", 5, "attempts per model request on 429, 500, 503 and network errors")
	fl.DurationVar(&g.Timeout, "timeout", 2*time.Minute, "time limit of one model request")
	fl.BoolVar(&g.Parallel, "parallel", false, "run the read-only calls of one model turn concurrently")
	fl.StringVar(&g.maxCost, "max-cost", "", "most this run may spend, in bridge.currency (e.g. 0.50); overrides bridge.budget.max_per_run")
	fl.StringVar(&g.bridgeConfig, "bridge-config", "", "with --server-cmd or --server-url: a YAML file whose bridge: (prices, budget, API key) and secrets: sections are read")
	fl.StringVar(&g.metricsAddr, "metrics", "", "serve the bridge's Prometheus metrics (requests, tokens, spend) at http://ADDR/metrics, e.g. 127.0.0.1:9465")
	fl.BoolVar(&g.metricsRemote, "metrics-allow-remote", false, "allow a non-loopback --metrics address")
	fl.BoolVar(&g.Yes, "yes", false, "accept every approval prompt without asking (logged); never overrides a guard denial")
	return cmd
}

func runGemini(cmd *cobra.Command, f *configFlags, g *geminiFlags, prompt string) error {
	if err := (configs.Metrics{Addr: g.metricsAddr, AllowRemote: g.metricsRemote}).CheckFlag("--metrics", "--metrics-allow-remote"); err != nil {
		return err
	}
	if g.metricsRemote && g.metricsAddr == "" {
		return errors.New("--metrics-allow-remote needs --metrics")
	}
	open := func(ctx context.Context) (bridge.Server, *slog.Logger, func(), error) {
		srv, log, closeServer, records, err := geminiServer(ctx, cmd, f, g)
		if err != nil {
			return srv, log, closeServer, err
		}
		if g.Spend.Currency == "" && g.maxCost != "" {
			closeServer()
			return srv, nil, nil, errors.New("--max-cost needs bridge.currency and bridge.prices in the config (or --bridge-config)")
		}
		if g.metricsAddr != "" {
			m, err := mcpserver.ServeBridgeMetrics(ctx, g.metricsAddr, log)
			if err != nil {
				closeServer()
				return srv, nil, nil, err
			}
			records = append(records, func(ev bridge.SpendEvent) {
				m.Record(mcpserver.BridgeRequest{Model: g.Model, Purpose: ev.Purpose, Currency: ev.Currency,
					Input: ev.Usage.Input(), CachedInput: ev.Usage.Cached, Output: ev.Usage.Output(), CostMicros: int64(ev.Cost)})
			})
			closeServer = closeBoth(closeServer, m.Close)
		}
		g.Spend.Record = recordAll(records)
		return srv, log, closeServer, nil
	}
	return bridge.Run(cmd.Context(), &g.RunOptions, prompt, open)
}

// closeBoth closes the server, then the metrics listener.
func closeBoth(server, metrics func()) func() {
	return func() { server(); metrics() }
}

// recordAll hands each spend event to every recorder (the audit log, the
// metrics); nil for none.
func recordAll(records []func(bridge.SpendEvent)) func(bridge.SpendEvent) {
	if len(records) == 0 {
		return nil
	}
	return func(ev bridge.SpendEvent) {
		for _, r := range records {
			r(ev)
		}
	}
}

// geminiServer is the MCP server to drive: toolwarden's own, built like
// serve builds it, unless --server-cmd or --server-url names another. It
// sets g's Spend and APIKey from the bridge section (the config's, or
// --bridge-config's) and returns where spend events are recorded (the
// in-process server's audit log).
func geminiServer(ctx context.Context, cmd *cobra.Command, f *configFlags, g *geminiFlags) (bridge.Server, *slog.Logger, func(), []func(bridge.SpendEvent), error) {
	if g.serverCmd != "" && g.serverURL != "" {
		return bridge.Server{}, nil, nil, nil, errors.New("--server-cmd and --server-url exclude each other")
	}
	if g.serverToken != "" && g.serverURL == "" {
		return bridge.Server{}, nil, nil, nil, errors.New("--server-token needs --server-url")
	}
	if g.serverCmd != "" || g.serverURL != "" {
		return otherServer(cmd, g)
	}
	if g.bridgeConfig != "" {
		return bridge.Server{}, nil, nil, nil, errors.New("--bridge-config is for --server-cmd and --server-url; the in-process server reads the bridge: section of its config")
	}
	l, err := f.load(cmd)
	if err != nil {
		return bridge.Server{}, nil, nil, nil, err
	}
	if err := useBridge(g, l.Config.Bridge); err != nil {
		return bridge.Server{}, nil, nil, nil, err
	}
	srv, err := mcpserver.OpenInProcess(ctx, l)
	if err != nil {
		return bridge.Server{}, nil, nil, nil, err
	}
	var records []func(bridge.SpendEvent)
	if g.Spend.Currency != "" {
		records = append(records, func(ev bridge.SpendEvent) {
			srv.RecordSpend(mcpserver.Spend{Model: ev.Model, Purpose: ev.Purpose, Cost: ev.Cost.String() + " " + ev.Currency,
				RunCost: ev.RunTotal.String() + " " + ev.Currency, InputTokens: ev.Usage.Input(), OutputTokens: ev.Usage.Output()})
		})
	}
	return bridge.Server{InProcess: srv.MCP}, srv.Log, srv.Close, records, nil
}

// otherServer is the server --server-cmd or --server-url names, priced
// by --bridge-config's bridge section when given.
func otherServer(cmd *cobra.Command, g *geminiFlags) (bridge.Server, *slog.Logger, func(), []func(bridge.SpendEvent), error) {
	// The policy flags would configure a server that is not used; the
	// user must not believe they narrowed what the other one allows.
	for _, name := range []string{"config", "workspace", "allow", "deny"} {
		if cmd.Flags().Changed(name) {
			return bridge.Server{}, nil, nil, nil, fmt.Errorf("--%s configures the in-process server; with --server-cmd or --server-url, configure that server instead", name)
		}
	}
	var hide []string
	if g.bridgeConfig != "" {
		b, err := configs.LoadBridge(g.bridgeConfig)
		if err != nil {
			return bridge.Server{}, nil, nil, nil, err
		}
		if err := useBridge(g, b); err != nil {
			return bridge.Server{}, nil, nil, nil, err
		}
		hide = b.SecretEnv()
	}
	token := g.serverToken
	if token == "" {
		token = os.Getenv(bridge.ServerTokenEnv)
	}
	return bridge.Server{Command: g.serverCmd, URL: g.serverURL, Token: token, HideEnv: hide, Stderr: os.Stderr}, mcpserver.NewLogger("info"), func() {}, nil, nil
}

// useBridge takes the prices, budget and API key source of b.
func useBridge(g *geminiFlags, b configs.Bridge) error {
	var err error
	if g.Spend, err = geminiSpend(b, g.Model, g.maxCost); err != nil {
		return err
	}
	if ref := b.APIKeyRef(); ref.Set() {
		g.APIKey = func(ctx context.Context) (string, error) {
			key, err := b.Secret(ctx, ref)
			if err == nil && strings.TrimSpace(key) == "" {
				err = fmt.Errorf("%s is empty", ref)
			}
			return key, err
		}
	}
	return nil
}

// geminiSpend is the bridge's Spend for model from the validated bridge
// config, with --max-cost in place of max_per_run.
func geminiSpend(c configs.Bridge, model, maxCost string) (bridge.Spend, error) {
	if c.Currency == "" || len(c.Prices) == 0 {
		return bridge.Spend{}, nil
	}
	i := slices.IndexFunc(c.Prices, func(p configs.ModelPrice) bool { return p.Model == model })
	if i < 0 {
		return bridge.Spend{}, fmt.Errorf("bridge.prices has no price for --model %s: add one, or remove bridge.prices to run unmetered", model)
	}
	p := c.Prices[i]
	s := bridge.Spend{Currency: c.Currency, Model: model, RunRule: "bridge.budget.max_per_run", Price: bridge.Price{Tiers: make([]bridge.Tier, len(p.Tiers))}}
	type amount struct {
		to  *money.Amount
		key string
		v   string
	}
	amounts := []amount{{&s.Price.Input, "input", p.Input}, {&s.Price.Output, "output", p.Output}, {&s.Price.CachedInput, "cached_input", p.CachedInput},
		{&s.MaxPerRun, "bridge.budget.max_per_run", c.Budget.MaxPerRun}, {&s.MaxPerCall, "bridge.budget.max_per_call", c.Budget.MaxPerCall}}
	if maxCost != "" {
		amounts[3].key, amounts[3].v, s.RunRule = "--max-cost", maxCost, "--max-cost"
	}
	for j, t := range p.Tiers {
		tier := &s.Price.Tiers[j]
		tier.Above = t.PromptTokens
		amounts = append(amounts, amount{&tier.Input, "input", t.Input}, amount{&tier.Output, "output", t.Output}, amount{&tier.CachedInput, "cached_input", t.CachedInput})
	}
	for _, a := range amounts {
		if a.v == "" {
			continue
		}
		v, err := money.Parse(a.v)
		if err != nil {
			return bridge.Spend{}, fmt.Errorf("%s: %w", a.key, err)
		}
		*a.to = v
	}
	return s, nil
}
