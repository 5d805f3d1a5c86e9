package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	fake "github.com/toolwarden/toolwarden/internal/llmfake/gemini"
)

// spendConfig writes a config pricing gemini-2.5-flash at 1.00 input and
// 2.00 output per million tokens (one and two micro-dollars a token).
func spendConfig(t *testing.T, ws, budget string) string {
	path := filepath.Join(filepath.Dir(ws), "spend.yaml")
	require.NoError(t, os.WriteFile(path, []byte("bridge:\n  currency: USD\n  prices:\n"+
		"    - {model: gemini-2.5-flash, input: \"1.00\", output: \"2.00\"}\n"+budget), 0o600))
	return path
}

// TestGeminiBinarySpendStopsBeforeBudget: the built binary prices each
// scripted usageMetadata, writes a spend audit line per request, and
// stops before the request that could pass --max-cost (which overrides
// bridge.budget.max_per_run), with a message naming the rule.
func TestGeminiBinarySpendStopsBeforeBudget(t *testing.T) {
	t.Parallel()
	ws, env := geminiWorkspace(t)
	cfg := spendConfig(t, ws, "  budget: {max_per_run: \"5\"}\n")
	f := fake.New(
		fake.Turn{Parts: []map[string]any{fake.Call("e1", "read_file", map[string]any{"path": "hello.txt"})}, Usage: fake.Usage(1500, 0, 500, 0)},
		fake.Turn{Parts: []map[string]any{fake.Call("e2", "read_file", map[string]any{"path": "hello.txt"})}, Usage: fake.Usage(3000, 0, 1000, 1000)},
		fake.Reply(fake.Text("never sent")))
	defer f.Close()
	f.CountWith(func(fake.Request) int { return 1000 })
	stdout, stderr, err := geminiRun(t, env, "--config", cfg, "--workspace", ws, "--base-url", f.URL, "--max-cost", "0.010", "read hello twice")
	require.Error(t, err)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "stopped before the next request")
	assert.Contains(t, stderr, "--max-cost (0.0095 USD of 0.01 USD spent so far)")
	assert.Contains(t, stderr, "$ turn 0.0025 USD (1500 in, 500 out)")
	assert.Len(t, f.Requests(), 2, "the request that could pass the budget is not sent")
	assert.NotEmpty(t, f.Counts.Requests(), "requests are counted with countTokens")
	assert.Empty(t, f.Problems())
	log := auditText(t, filepath.Join(filepath.Dir(ws), "audit.jsonl"))
	assert.Contains(t, log, `"tool":"gemini-2.5-flash","args_sha256":"","rule":"bridge.turn","outcome":"spend"`)
	assert.Contains(t, log, `"cost":"0.007 USD","run_cost":"0.0095 USD","input_tokens":3000,"output_tokens":2000`)
}

func TestGeminiBinaryMaxCostNeedsPrices(t *testing.T) {
	t.Parallel()
	ws, env := geminiWorkspace(t)
	f := fake.New()
	defer f.Close()
	_, stderr, err := geminiRun(t, env, "--workspace", ws, "--base-url", f.URL, "--max-cost", "1", "hi")
	require.Error(t, err)
	assert.Contains(t, stderr, "--max-cost needs bridge.currency and bridge.prices")
	assert.Empty(t, f.Requests())
}

func TestGeminiBinaryUnpricedModelRefused(t *testing.T) {
	t.Parallel()
	ws, env := geminiWorkspace(t)
	cfg := spendConfig(t, ws, "")
	f := fake.New()
	defer f.Close()
	_, stderr, err := geminiRun(t, env, "--config", cfg, "--workspace", ws, "--base-url", f.URL, "--model", "gemini-2.5-pro", "hi")
	require.Error(t, err)
	assert.Contains(t, stderr, "bridge.prices has no price for --model gemini-2.5-pro")
}
