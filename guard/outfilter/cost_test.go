package outfilter

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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
