package bridge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/bridge"
	fake "github.com/toolwarden/toolwarden/internal/llmfake/gemini"
	"github.com/toolwarden/toolwarden/internal/money"
)

// noteServer offers one read-only tool, note, whose output is size bytes.
func noteServer(size int) *server.MCPServer {
	srv := server.NewMCPServer("notes", "1")
	srv.AddTool(mcp.NewTool("note", mcp.WithReadOnlyHintAnnotation(true)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strings.Repeat("x", size)), nil
		})
	return srv
}

// usd prices input at 1.00 and output at 2.00 per million tokens: one
// and two micro-units a token.
func usd(run, call string) bridge.Spend {
	s := bridge.Spend{Currency: "USD", Model: "gemini-2.5-flash", Price: bridge.Price{Input: money.Unit, Output: 2 * money.Unit}}
	if run != "" {
		s.MaxPerRun, _ = money.Parse(run)
	}
	if call != "" {
		s.MaxPerCall, _ = money.Parse(call)
	}
	return s
}

func maxOutputTokens(r fake.Request) any {
	gc, _ := r.Body["generationConfig"].(map[string]any)
	return gc["maxOutputTokens"]
}

func TestPriceCost(t *testing.T) {
	p := bridge.Price{Input: 300_000, Output: 2_500_000, CachedInput: 75_000} // 0.30, 2.50, 0.075 per million
	u := bridge.Usage{Prompt: 1_000_000, Cached: 400_000, Candidates: 100_000, Thoughts: 300_000}
	// 600k uncached at 0.30, 400k cached at 0.075, 400k output (thoughts included) at 2.50.
	assert.Equal(t, money.Amount(180_000+30_000+1_000_000), p.Cost(u))
	assert.Equal(t, money.Amount(1), p.Cost(bridge.Usage{Prompt: 1}), "a fraction of a micro-unit is billed as one")
}

// TestBudgetStopsBeforeOverspend: after the spend of each response is
// charged, the next request is counted first and refused when its
// prompt and room for an answer would pass max_per_run; a request that
// is sent has its answer bounded by maxOutputTokens to what is left.
func TestBudgetStopsBeforeOverspend(t *testing.T) {
	spend := usd("0.010", "")
	var events []bridge.SpendEvent
	spend.Record = func(e bridge.SpendEvent) { events = append(events, e) }
	h := newHarness(t, setup{srv: noteServer(10), opts: bridge.Options{Spend: spend}},
		fake.Turn{Parts: []map[string]any{fake.Call("n1", "note", nil)}, Usage: fake.Usage(1500, 0, 500, 0)},
		fake.Turn{Parts: []map[string]any{fake.Call("n2", "note", nil)}, Usage: fake.Usage(3000, 0, 1000, 1000)},
		fake.Reply(fake.Text("never sent")))
	h.fake.CountWith(func(fake.Request) int { return 1000 })
	_, err := h.b.Ask(context.Background(), "take notes")
	require.ErrorIs(t, err, bridge.ErrBudget)
	assert.Contains(t, err.Error(), "bridge.budget.max_per_run")
	assert.Contains(t, err.Error(), "0.0095 USD of 0.01 USD spent")

	reqs := h.fake.Requests()
	require.Len(t, reqs, 2, "the third request is not sent")
	assert.Equal(t, 1, h.fake.Left())
	assert.NotNil(t, maxOutputTokens(reqs[0]))
	// Second request: 1000 counted + 500 measured overhead = 1500 µ in;
	// 10000 - 2500 spent - 1500 leaves 6000 µ: 3000 output tokens.
	assert.EqualValues(t, 3000, maxOutputTokens(reqs[1]))
	require.Len(t, events, 2)
	assert.Equal(t, money.Amount(1500+1000), events[0].Cost)
	assert.Equal(t, money.Amount(3000+4000), events[1].Cost, "thoughts are billed as output")
	assert.Equal(t, money.Amount(9500), events[1].RunTotal)
	spent, cur := h.b.Spent()
	assert.Equal(t, "0.0095 USD", spent.String()+" "+cur)
	assert.Contains(t, h.activity.String(), "$ turn 0.0025 USD (1500 in, 500 out)")
	assert.Empty(t, h.b.History.Contents, "a stopped prompt leaves the history as it was")
}

// TestMaxPerCall: one request may cost at most max_per_call: its answer
// is bounded to what the cap leaves after the prompt, and a prompt that
// leaves no room is not sent.
func TestMaxPerCall(t *testing.T) {
	h := newHarness(t, setup{srv: noteServer(10), opts: bridge.Options{Spend: usd("", "0.002")}},
		fake.Turn{Parts: []map[string]any{fake.Call("n1", "note", nil)}, Usage: fake.Usage(600, 0, 100, 0)},
		fake.Turn{Parts: []map[string]any{fake.Call("n2", "note", nil)}, Usage: fake.Usage(1600, 0, 100, 0)},
		fake.Reply(fake.Text("never sent")))
	h.fake.CountWith(func(r fake.Request) int { return 500 * len(r.Contents()) })
	_, err := h.b.Ask(context.Background(), "take notes")
	require.ErrorIs(t, err, bridge.ErrBudget)
	assert.Contains(t, err.Error(), "bridge.budget.max_per_call")
	reqs := h.fake.Requests()
	require.Len(t, reqs, 2)
	// 3 contents: 1500 counted + 100 measured overhead; 2000 - 1600 µ
	// leaves 200 output tokens.
	assert.EqualValues(t, 200, maxOutputTokens(reqs[1]))
}

// TestSummaryKeepsRequiredTurns: when the history passes
// --max-context-tokens (counted with countTokens), the oldest turns are
// summarised by the model in a request of its own, with no tools, that is
// priced like the others; the task, the summary and the newest call with
// its responses are what the next request holds.
func TestSummaryKeepsRequiredTurns(t *testing.T) {
	h := newHarness(t, setup{srv: noteServer(1000), opts: bridge.Options{MaxContextTokens: 700, Spend: usd("1", "")}},
		fake.Turn{Parts: []map[string]any{fake.Call("c0", "note", nil)}, Usage: fake.Usage(100, 0, 10, 0)},
		fake.Turn{Parts: []map[string]any{fake.Call("c1", "note", nil)}, Usage: fake.Usage(400, 0, 10, 0)},
		fake.Turn{Parts: []map[string]any{fake.Call("c2", "note", nil)}, Usage: fake.Usage(700, 0, 10, 0)},
		fake.Turn{Parts: []map[string]any{fake.Text("SUMMARY: noted c0 and c1, both x's")}, Usage: fake.Usage(650, 0, 20, 0)},
		fake.Turn{Parts: []map[string]any{fake.Text("done")}, Usage: fake.Usage(400, 0, 5, 0)})
	answer, err := h.b.Ask(context.Background(), "THE TASK: take three notes")
	require.NoError(t, err)
	assert.Equal(t, "done", answer)

	reqs := h.fake.Requests()
	require.Len(t, reqs, 5)
	summary := reqs[3]
	assert.Nil(t, summary.Body["tools"], "the summary request offers no tools")
	assert.Contains(t, mustJSON(summary.Body["systemInstruction"]), "summary")
	in := mustJSON(summary.Contents())
	assert.Contains(t, in, "THE TASK")
	assert.Contains(t, in, `c0`)
	assert.Contains(t, in, `c1`)
	assert.NotContains(t, in, `c2`, "the newest call is not summarised")

	last := reqs[4].Contents()
	checkPairs(t, last)
	assert.Contains(t, mustJSON(last[0]), "THE TASK", "the task stays first, verbatim")
	assert.Contains(t, mustJSON(last[1]), "SUMMARY: noted c0 and c1")
	assert.NotContains(t, mustJSON(last), `"c0"`)
	assert.Contains(t, mustJSON(last), `"c2"`, "the newest call and its response stay")
	for j := 1; j < len(last); j++ {
		assert.NotEqual(t, last[j-1]["role"], last[j]["role"], "roles alternate")
	}
	assert.NotEmpty(t, h.fake.Counts.Requests(), "the window is counted with countTokens")
	assert.NotContains(t, h.log.String(), "estimate", "countTokens answered: no fallback")
	assert.Contains(t, h.log.String(), "earlier turns summarised")
	assert.Contains(t, h.activity.String(), "$ summary 0.00069 USD")
}

// TestPriceTiers: a prompt longer than a tier's threshold is priced, all
// of it, at that tier (Gemini 2.5 Pro: 1.25/10.00 up to 200k prompt
// tokens, 2.50/15.00 above).
func TestPriceTiers(t *testing.T) {
	p := bridge.Price{Input: 1_250_000, Output: 10_000_000,
		Tiers: []bridge.Tier{{Above: 200_000, Input: 2_500_000, Output: 15_000_000}}}
	assert.Equal(t, money.Amount(250_000+1_000_000), p.Cost(bridge.Usage{Prompt: 200_000, Candidates: 100_000}), "at the threshold: the base price")
	assert.Equal(t, money.Amount(500_003+1_500_000), p.Cost(bridge.Usage{Prompt: 200_001, Candidates: 100_000}), "one token past it: all at the tier's")
	p.Tiers = append(p.Tiers, bridge.Tier{Above: 1_000_000, Input: 5_000_000, Output: 20_000_000, CachedInput: 1_000_000})
	assert.Equal(t, money.Amount(5_000_000+1_000_000+2_000_000), p.Cost(bridge.Usage{Prompt: 2_000_000, Cached: 1_000_000, Candidates: 100_000}),
		"the last tier passed applies, with its cached price")
}

// TestBudgetAdmitsAtTheTierPrice: a request whose counted prompt passes a
// tier's threshold is admitted, and its answer bounded, at the tier's
// prices, so a long prompt cannot slip under the cap at the base price.
func TestBudgetAdmitsAtTheTierPrice(t *testing.T) {
	spend := usd("", "0.0100") // base 1.00/2.00; above 3000 prompt tokens 2.00/4.00
	spend.Price.Tiers = []bridge.Tier{{Above: 3000, Input: 2 * money.Unit, Output: 4 * money.Unit}}
	h := newHarness(t, setup{srv: noteServer(10), opts: bridge.Options{Spend: spend}},
		fake.Turn{Parts: []map[string]any{fake.Call("n1", "note", nil)}, Usage: fake.Usage(2000, 0, 100, 0)},
		fake.Reply(fake.Text("never sent")))
	counts := []int{2000, 4900}
	h.fake.CountWith(func(fake.Request) int {
		c := counts[0]
		if len(counts) > 1 {
			counts = counts[1:]
		}
		return c
	})
	_, err := h.b.Ask(context.Background(), "take notes")
	require.ErrorIs(t, err, bridge.ErrBudget, "at the base price the second prompt (4900 µ) would leave room; at the tier's (9800 µ) it does not")
	reqs := h.fake.Requests()
	require.Len(t, reqs, 1)
	// 2000 tokens (and the declarations' overhead) at the base 1 µ leave
	// about 8000 µ: 4000 output tokens at 2 µ.
	assert.InDelta(t, 4000, maxOutputTokens(reqs[0]), 200)
}
