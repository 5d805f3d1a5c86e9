package bridge

import (
	"context"
	"encoding/json"

	"google.golang.org/genai"
)

// TokenCounter is a Model that can count the tokens of contents with the
// API's own tokenizer (countTokens).
type TokenCounter interface {
	CountTokens(ctx context.Context, contents []*genai.Content) (int64, error)
}

// CountTokens counts contents with the countTokens endpoint. The Gemini
// API's count takes contents only, so the system instruction and tools
// are added by the bridge (see counter).
func (g *Gemini) CountTokens(ctx context.Context, contents []*genai.Content) (int64, error) {
	ctx, cancel := g.attemptContext(ctx)
	defer cancel()
	resp, err := g.client.Models.CountTokens(ctx, g.model, contents, nil)
	if err != nil {
		return 0, err
	}
	return int64(resp.TotalTokens), nil
}

// counter counts the tokens of requests: the API's count of the
// contents where the model offers one, else the estimate; the system
// instruction and tools (the overhead) are first estimated, then measured
// from each response's promptTokenCount.
type counter struct {
	model    Model
	overhead int64
	fellBack bool // the estimate's use was logged
	// last is the latest count, kept for the same contents (the window
	// and the budget both count a request).
	last struct {
		n           int
		first, tail *genai.Content
		tokens      int64
	}
}

func newCounter(model Model, cfg *genai.GenerateContentConfig) *counter {
	return &counter{model: model, overhead: estimateOverhead(cfg)}
}

// estimateOverhead estimates the tokens of a config's system instruction
// and tool declarations.
func estimateOverhead(cfg *genai.GenerateContentConfig) int64 {
	b, _ := json.Marshal(struct {
		S *genai.Content `json:"s"`
		T []*genai.Tool  `json:"t"`
	}{cfg.SystemInstruction, cfg.Tools})
	return int64(len(b)+3) / 4
}

// count returns the tokens of contents.
func (b *Bridge) count(ctx context.Context, contents []*genai.Content) (int64, error) {
	c := b.counter
	if len(contents) == 0 {
		return 0, nil
	}
	if l := &c.last; l.n == len(contents) && l.first == contents[0] && l.tail == contents[len(contents)-1] {
		return l.tokens, nil
	}
	n, err := b.countContents(ctx, contents)
	if err == nil {
		c.last.n, c.last.first, c.last.tail, c.last.tokens = len(contents), contents[0], contents[len(contents)-1], n
	}
	return n, err
}

func (b *Bridge) countContents(ctx context.Context, contents []*genai.Content) (int64, error) {
	c := b.counter
	if tc, ok := c.model.(TokenCounter); ok && !c.fellBack {
		n, err := tc.CountTokens(ctx, contents)
		if err == nil {
			return n, nil
		}
		if ctx.Err() != nil {
			return 0, err
		}
		b.log.Info("countTokens failed; counting with the estimate of 4 bytes of JSON per token from now on", "err", err)
		c.fellBack = true
	} else if !c.fellBack {
		b.log.Info("the model cannot count tokens; counting with the estimate of 4 bytes of JSON per token")
		c.fellBack = true
	}
	return int64(b.History.estimate(contents)), nil
}

// measured corrects the overhead from what a response says its prompt
// was.
func (c *counter) measured(u Usage, ofContents int64) {
	if over := u.Prompt - ofContents; u.Prompt > 0 && over >= 0 {
		c.overhead = over
	}
}
