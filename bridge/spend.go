package bridge

import (
	"errors"
	"fmt"
	"math"

	"github.com/toolwarden/toolwarden/internal/money"
	"google.golang.org/genai"
)

// Price is one model's price per million tokens. Prompt tokens served
// from a context cache cost CachedInput (0: Input's price); thinking
// tokens are billed as output. A request whose prompt is longer than a
// tier's Above tokens is priced, all of it, at that tier's prices (the
// last such tier: Tiers ascend).
type Price struct {
	Input, Output, CachedInput money.Amount
	Tiers                      []Tier
}

// Tier is the price of prompts of more than Above tokens.
type Tier struct {
	Above                      int64
	Input, Output, CachedInput money.Amount
}

// at is the flat price of a request with a prompt of promptTokens.
func (p Price) at(promptTokens int64) Price {
	flat := Price{Input: p.Input, Output: p.Output, CachedInput: p.CachedInput}
	for _, t := range p.Tiers {
		if promptTokens > t.Above {
			flat = Price{Input: t.Input, Output: t.Output, CachedInput: t.CachedInput}
		}
	}
	return flat
}

// Spend is what a conversation may spend, in Currency. With no Currency
// nothing is priced or capped. A cap of 0 is no cap.
type Spend struct {
	Currency   string
	Model      string
	Price      Price
	MaxPerRun  money.Amount
	MaxPerCall money.Amount
	// RunRule names where MaxPerRun came from, for the stop message
	// (bridge.budget.max_per_run or --max-cost).
	RunRule string
	// Record receives every request's spend (the audit line, a metric);
	// nil records nothing.
	Record func(SpendEvent)
}

// SpendEvent is one model request's usage and price.
type SpendEvent struct {
	Model, Currency string
	Purpose         string // "turn" or "summary"
	Usage           Usage
	Cost, RunTotal  money.Amount
}

// Usage is a response's usageMetadata. Prompt includes Cached.
type Usage struct {
	Prompt, Cached, Candidates, Thoughts, ToolUse int64
}

// Input is the prompt-side token count; Output what is billed as output.
func (u Usage) Input() int64  { return u.Prompt + u.ToolUse }
func (u Usage) Output() int64 { return u.Candidates + u.Thoughts }

func usageOf(resp *genai.GenerateContentResponse) (Usage, bool) {
	if resp == nil || resp.UsageMetadata == nil {
		return Usage{}, false
	}
	m := resp.UsageMetadata
	return Usage{Prompt: int64(m.PromptTokenCount), Cached: int64(m.CachedContentTokenCount),
		Candidates: int64(m.CandidatesTokenCount), Thoughts: int64(m.ThoughtsTokenCount), ToolUse: int64(m.ToolUsePromptTokenCount)}, true
}

// Cost prices u at its prompt's tier, each term rounded up to the
// micro-unit.
func (p Price) Cost(u Usage) money.Amount {
	p = p.at(u.Prompt)
	cached := min(max(u.Cached, 0), u.Prompt)
	cachedPrice := p.CachedInput
	if cachedPrice == 0 {
		cachedPrice = p.Input
	}
	c := money.PerMillion(u.Prompt-cached+u.ToolUse, p.Input)
	c = money.Add(c, money.PerMillion(cached, cachedPrice))
	return money.Add(c, money.PerMillion(u.Output(), p.Output))
}

// ErrBudget stops a run before a request that could pass the budget.
var ErrBudget = errors.New("spend budget")

// minOutputTokens is the least room for an answer worth sending a
// request for: below it the run stops instead.
const minOutputTokens = 64

// meter counts a run's spend against its Spend.
type meter struct {
	spend Spend
	spent money.Amount
}

func (m *meter) priced() bool { return m.spend.Currency != "" }

// admit checks a request of about inputTokens against the caps before it
// is sent, and returns the output tokens it may produce (0: no cap), so
// that even a full answer stays within them.
func (m *meter) admit(inputTokens int64) (int32, error) {
	if !m.priced() {
		return 0, nil
	}
	room, rule, capped := m.room()
	if !capped {
		return 0, nil
	}
	price := m.spend.Price.at(inputTokens)
	in := money.PerMillion(inputTokens, price.Input)
	out := int64(0)
	if in < room {
		out = money.Tokens(room-in, price.Output)
	}
	if out < minOutputTokens {
		return 0, fmt.Errorf("%w: stopped before the next request: its prompt alone (about %d tokens, %s %s) and room for an answer would pass %s (%s %s of %s %s spent so far)",
			ErrBudget, inputTokens, in, m.spend.Currency, rule, m.spent, m.spend.Currency, m.limitOf(rule), m.spend.Currency)
	}
	return int32(min(out, math.MaxInt32)), nil
}

// room is what the next request may cost and the rule that sets it.
func (m *meter) room() (money.Amount, string, bool) {
	room, rule, capped := money.Amount(math.MaxInt64), "", false
	if c := m.spend.MaxPerRun; c > 0 {
		room, rule, capped = max(c-m.spent, 0), m.runRule(), true
	}
	if c := m.spend.MaxPerCall; c > 0 && c < room {
		room, rule, capped = c, "bridge.budget.max_per_call", true
	}
	return room, rule, capped
}

func (m *meter) runRule() string {
	if m.spend.RunRule != "" {
		return m.spend.RunRule
	}
	return "bridge.budget.max_per_run"
}

func (m *meter) limitOf(rule string) money.Amount {
	if rule == "bridge.budget.max_per_call" {
		return m.spend.MaxPerCall
	}
	return m.spend.MaxPerRun
}

// charge adds a response's usage to the run and records it.
func (m *meter) charge(u Usage, purpose string) SpendEvent {
	ev := SpendEvent{Model: m.spend.Model, Currency: m.spend.Currency, Purpose: purpose, Usage: u}
	if m.priced() {
		ev.Cost = m.spend.Price.Cost(u)
		m.spent = money.Add(m.spent, ev.Cost)
	}
	ev.RunTotal = m.spent
	if m.spend.Record != nil {
		m.spend.Record(ev)
	}
	return ev
}
