package outfilter

import (
	"runtime"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// adversarialKeywords are texts made of one keyword repeated: every
// position is a keyword hit. The regular expressions must still look at
// each byte a bounded number of times, or one tool result costs minutes.
var adversarialKeywords = []string{"-----begin ", "-----BEGIN PRIVATE KEY-----", "api-=", "token=", "xoxb-"}

// The windows a rule's expression runs over cover the text a bounded
// number of times, whatever the density of keyword hits. Multi-line rules
// (private keys) have windows larger than maxWindow; they were never
// merged, so 64 KiB of "-----BEGIN " made ~6,000 windows of 16 KiB each
// (~100 MB of regular-expression input, ~25 s).
func TestWindowsCoverTextBoundedTimes(t *testing.T) {
	f := newFilter(t)
	for _, unit := range adversarialKeywords {
		text := strings.Repeat(unit, (64<<10)/len(unit))
		windows, _ := f.prefilter(text, &Report{})
		for ri, ws := range windows {
			total := 0
			for _, w := range ws {
				total += w.end - w.start
			}
			assert.LessOrEqual(t, total, 3*len(text), "%q: rule %s scans %d bytes of %d", unit, f.rules[ri].id, total, len(text))
		}
	}
}

// BenchmarkTextAdversarial filters 1 MiB of one keyword repeated.
func BenchmarkTextAdversarial(b *testing.B) {
	f := newFilter(b)
	for _, unit := range adversarialKeywords {
		text := strings.Repeat(unit, (1<<20)/len(unit))
		b.Run(strings.Trim(unit, " -="), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				f.Text(text, &Report{})
			}
		})
	}
}

// A JSON document is scanned one string at a time; strings that each hold
// a keyword must not each allocate per-rule state. A 1 MiB array of "api"
// strings allocated ~1.8 GB.
func TestJSONKeywordStringsAllocateBoundedMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops items at random; scripts/test runs this in its non-race step")
	}
	f := newFilter(t)
	raw := []byte("[" + strings.Repeat(`"api",`, 64<<10/6) + `"api"]`)
	_, _ = f.JSON(raw, &Report{}) // warm up the pool
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := f.JSON(raw, &Report{})
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64*len(raw)), "bytes allocated for %d bytes of JSON", len(raw))
}

// TestDenseResultsAreWithheldQuickly: a result made of one keyword repeated
// (1 MiB of "api-=" took ~3 s of CPU to scan) costs at most MaxChecks rule
// checks and is withheld with ErrTooDense, never passed unscanned; the
// realistic 1 MiB text of the benchmarks stays well inside the budget.
func TestDenseResultsAreWithheldQuickly(t *testing.T) {
	f := newFilter(t)
	for _, unit := range adversarialKeywords {
		text := strings.Repeat(unit, (1<<20)/len(unit))
		out, rep, err := f.Result(mcp.NewToolResultText(text))
		if err == nil {
			assert.LessOrEqual(t, rep.checks, MaxChecks, "%q", unit)
			assert.NotNil(t, out)
			continue
		}
		require.ErrorIs(t, err, ErrTooDense, "%q", unit)
		assert.Nil(t, out, "a withheld result is not returned")
	}
	_, rep, err := f.Result(mcp.NewToolResultText(mixedText()))
	require.NoError(t, err)
	assert.Less(t, rep.checks, MaxChecks/5, "ordinary text is far from the budget")
}
