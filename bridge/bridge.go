// Package bridge drives Gemini function calling against the tools of an
// MCP server, so that every call the model makes goes through that
// server's guard: an MCP client, the function-calling loop, the json-block
// fallback protocol, conversation state and terminal approval.
package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/internal/money"
	"google.golang.org/genai"
)

// The protocols the bridge speaks with the model.
const (
	ProtocolFunctions = "functions"  // native function calling
	ProtocolJSONBlock = "json-block" // fenced JSON blocks in text
)

// Options configure a Bridge.
type Options struct {
	MaxSteps         int      // model requests per prompt; default 20
	Parallel         bool     // run consecutive read-only calls concurrently
	CallingMode      string   // auto, any, none or validated
	AllowedTools     []string // allowed_function_names (any/validated only)
	Protocol         string   // ProtocolFunctions (default) or ProtocolJSONBlock
	MaxContextTokens int      // history budget; 0: none
	Spend            Spend    // prices and caps; zero: unmetered
}

// Bridge is one conversation between a model and an MCP server's tools.
type Bridge struct {
	model    Model
	tools    *Toolbox
	opts     Options
	History  *History
	config   *genai.GenerateContentConfig
	activity io.Writer // tool activity, for the user (stderr)
	log      *slog.Logger
	counter  *counter
	meter    *meter
}

// ErrMaxSteps is returned when the model still calls tools after MaxSteps
// requests.
var ErrMaxSteps = errors.New("the model did not give a final answer within --max-steps requests")

// ErrContextBudget is returned when what cannot be dropped from the
// history (the first message and the newest turn) is over the budget.
var ErrContextBudget = errors.New("the conversation does not fit the context budget")

// New prepares a conversation. Tools whose schema cannot be adapted for
// Gemini are left out with a warning.
func New(model Model, tools *Toolbox, opts Options, activity io.Writer, log *slog.Logger) (*Bridge, error) {
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = 20
	}
	if opts.Protocol == "" {
		opts.Protocol = ProtocolFunctions
	}
	b := &Bridge{model: model, tools: tools, opts: opts, History: &History{}, activity: &lockedWriter{w: activity}, log: log}
	cfg, err := b.generateConfig()
	if err != nil {
		return nil, err
	}
	b.config = cfg
	b.counter = newCounter(model, cfg)
	b.meter = &meter{spend: opts.Spend}
	return b, nil
}

// Ask sends a user prompt and runs the loop until the model answers in
// text. On error the history is left as it was before the prompt.
func (b *Bridge) Ask(ctx context.Context, prompt string) (string, error) {
	// A summary may rewrite the history: keep the whole of it.
	before := slices.Clone(b.History.Contents)
	b.History.Add(genai.NewContentFromText(prompt, genai.RoleUser))
	answer, err := b.loop(ctx)
	if err != nil {
		b.History.Contents = before
	}
	return answer, err
}

func (b *Bridge) loop(ctx context.Context) (string, error) {
	for range b.opts.MaxSteps {
		if err := b.fitWindow(ctx); err != nil {
			return "", err
		}
		resp, err := b.send(ctx, b.History.Contents, b.config, "turn", b.counter.overhead)
		if err != nil {
			return "", err
		}
		answer, done, err := b.step(ctx, resp)
		if done || err != nil {
			return answer, err
		}
	}
	return "", fmt.Errorf("%w (%d)", ErrMaxSteps, b.opts.MaxSteps)
}

// fitWindow keeps the history within --max-context-tokens, counted with
// the API where it can: when it is over, the oldest turns are summarised
// by the model (see compact).
func (b *Bridge) fitWindow(ctx context.Context) error {
	limit := b.opts.MaxContextTokens
	if limit <= 0 || b.History.estimate(b.History.Contents) <= limit/2 {
		return nil // far from full: no count request
	}
	n, err := b.count(ctx, b.History.Contents)
	if err != nil || n <= int64(limit) {
		return err
	}
	summarised, err := b.compact(ctx, limit)
	if err != nil {
		return err
	}
	if summarised > 0 {
		b.log.Info("earlier turns summarised to fit --max-context-tokens", "summarised_messages", summarised, "tokens_before", n)
		if n, err = b.count(ctx, b.History.Contents); err != nil || n <= int64(limit) {
			return err
		}
	}
	return fmt.Errorf("%w: the task, the latest prompt and the newest turn alone are %d tokens, over --max-context-tokens %d",
		ErrContextBudget, n, limit)
}

// send sends one model request. When spend is priced, the request is
// counted first and refused if it could pass a cap, and its answer is
// bounded (maxOutputTokens) to what is left; its usage is charged after.
func (b *Bridge) send(ctx context.Context, contents []*genai.Content, cfg *genai.GenerateContentConfig, purpose string, overhead int64) (*genai.GenerateContentResponse, error) {
	counted := int64(-1)
	if b.meter.priced() {
		n, err := b.count(ctx, contents)
		if err != nil {
			return nil, fmt.Errorf("counting tokens: %w", err)
		}
		counted = n
		maxOut, err := b.meter.admit(n + overhead)
		if err != nil {
			return nil, err
		}
		if maxOut > 0 && (cfg.MaxOutputTokens == 0 || maxOut < cfg.MaxOutputTokens) {
			capped := *cfg
			capped.MaxOutputTokens = maxOut
			cfg = &capped
		}
	}
	resp, err := b.model.Generate(ctx, contents, cfg)
	if err != nil {
		return nil, fmt.Errorf("model request: %w", err)
	}
	b.charge(resp, purpose, counted)
	return resp, nil
}

// charge records a response's usage; a priced response without usage is
// charged its counted prompt, and said so.
func (b *Bridge) charge(resp *genai.GenerateContentResponse, purpose string, counted int64) {
	u, ok := usageOf(resp)
	if !ok {
		if !b.meter.priced() {
			return
		}
		b.log.Warn("the response carries no usageMetadata: charged for its counted prompt only", "purpose", purpose)
		u = Usage{Prompt: max(counted, 0)}
	} else if counted >= 0 && purpose == "turn" {
		b.counter.measured(u, counted)
	}
	ev := b.meter.charge(u, purpose)
	if b.meter.priced() {
		fmt.Fprintf(b.activity, "$ %s %s %s (%d in, %d out); %s %s this run\n", purpose, ev.Cost, ev.Currency,
			u.Input(), u.Output(), ev.RunTotal, ev.Currency)
		if c := b.meter.spend.MaxPerCall; c > 0 && ev.Cost > c {
			b.log.Warn("a request cost more than bridge.budget.max_per_call (its answer ran past maxOutputTokens, or the count was low)",
				"cost", ev.Cost.String(), "max_per_call", c.String())
		}
	}
}

// Spent is what this bridge's requests have cost so far.
func (b *Bridge) Spent() (money.Amount, string) { return b.meter.spent, b.meter.spend.Currency }

// step handles one model response: it runs the calls and records the
// results (done false), or returns the final answer (done true).
func (b *Bridge) step(ctx context.Context, resp *genai.GenerateContentResponse) (answer string, done bool, err error) {
	if finishReason(resp) == genai.FinishReasonMalformedFunctionCall {
		// The API could not parse the model's call; tell the model, with a
		// model turn first so that turns keep alternating.
		fmt.Fprintln(b.activity, "× the model wrote a malformed function call; asking it to try again")
		b.History.Add(genai.NewContentFromText("[my function call was malformed]", genai.RoleModel),
			genai.NewContentFromText(malformedCallNote, genai.RoleUser))
		return "", false, nil
	}
	turn, err := modelTurn(resp)
	if err != nil {
		return "", true, err
	}
	b.History.Add(turn)
	var reply *genai.Content
	if b.opts.Protocol == ProtocolJSONBlock {
		reply = b.runBlocks(ctx, text(turn))
	} else {
		reply = b.runCalls(ctx, turn)
	}
	if err := ctx.Err(); err != nil {
		return "", true, err
	}
	if reply != nil {
		b.History.Add(reply)
		return "", false, nil
	}
	if answer = text(turn); answer == "" {
		return "", true, fmt.Errorf("the model returned an empty answer (finish reason %s)", finishReason(resp))
	}
	return answer, true, nil
}

const malformedCallNote = "Your last function call could not be parsed (MALFORMED_FUNCTION_CALL). " +
	"Call one of the declared functions again with arguments that match its parameters schema, or answer in text."

func finishReason(resp *genai.GenerateContentResponse) genai.FinishReason {
	if resp == nil || len(resp.Candidates) == 0 {
		return ""
	}
	return resp.Candidates[0].FinishReason
}

// modelTurn is the first candidate's content, with its role set.
func modelTurn(resp *genai.GenerateContentResponse) (*genai.Content, error) {
	if resp == nil || len(resp.Candidates) == 0 || resp.Candidates[0].Content == nil {
		reason := "no candidates"
		if resp != nil && resp.PromptFeedback != nil {
			reason = "prompt blocked: " + string(resp.PromptFeedback.BlockReason)
		} else if resp != nil && len(resp.Candidates) > 0 {
			reason = "finish reason " + string(resp.Candidates[0].FinishReason)
		}
		return nil, fmt.Errorf("the model returned no content (%s)", reason)
	}
	c := resp.Candidates[0].Content
	c.Role = genai.RoleModel
	return c, nil
}

// text joins a turn's visible text parts (not its thoughts).
func text(c *genai.Content) string {
	var parts []string
	for _, p := range c.Parts {
		if p.Text != "" && !p.Thought {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "")
}

// Tools returns the server's tools, as the model is told of them.
func (b *Bridge) Tools() []mcp.Tool { return b.tools.Tools() }

// lockedWriter serialises writes from parallel calls.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
