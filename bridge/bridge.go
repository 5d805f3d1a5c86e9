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
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
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
	return b, nil
}

// Ask sends a user prompt and runs the loop until the model answers in
// text. On error the history is left as it was before the prompt.
func (b *Bridge) Ask(ctx context.Context, prompt string) (string, error) {
	before := len(b.History.Contents)
	b.History.Add(genai.NewContentFromText(prompt, genai.RoleUser))
	answer, err := b.loop(ctx)
	if err != nil {
		b.History.Contents = b.History.Contents[:before]
	}
	return answer, err
}

func (b *Bridge) loop(ctx context.Context) (string, error) {
	for range b.opts.MaxSteps {
		contents, dropped := b.History.Fit(b.opts.MaxContextTokens)
		if dropped > 0 {
			b.log.Info("history truncated to fit --max-context-tokens", "dropped_messages", dropped)
		}
		if n := b.History.estimate(contents); b.opts.MaxContextTokens > 0 && n > b.opts.MaxContextTokens {
			return "", fmt.Errorf("%w: the first message and the newest turn alone are about %d tokens, over --max-context-tokens %d",
				ErrContextBudget, n, b.opts.MaxContextTokens)
		}
		resp, err := b.model.Generate(ctx, contents, b.config)
		if err != nil {
			return "", fmt.Errorf("model request: %w", err)
		}
		answer, done, err := b.step(ctx, resp)
		if done || err != nil {
			return answer, err
		}
	}
	return "", fmt.Errorf("%w (%d)", ErrMaxSteps, b.opts.MaxSteps)
}

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
