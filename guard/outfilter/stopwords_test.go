package outfilter

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zricethezav/gitleaks/v8/config"
)

// The stop words are found as gitleaks' own trie finds them: every stop
// word of the default rules inside random text, in any case, and random
// text around none, say the same as Allowlist.ContainsStopWord.
func TestStopWordsAsGitleaks(t *testing.T) {
	set, err := loadRules()
	require.NoError(t, err)
	var lists []allowlist
	for _, r := range set.rules {
		lists = append(lists, r.allow...)
	}
	lists = append(lists, set.global...)
	checked := 0
	for _, a := range lists {
		if a.stop == nil {
			continue
		}
		words := a.stopWords
		ref := &config.Allowlist{StopWords: words}
		require.NoError(t, ref.Validate())
		rng := rand.New(rand.NewPCG(1, 2))
		const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+/="
		random := func(n int) string {
			b := make([]byte, n)
			for i := range b {
				b[i] = letters[rng.IntN(len(letters))]
			}
			return string(b)
		}
		for _, w := range words {
			for _, s := range []string{w, strings.ToUpper(w), random(5) + w + random(7), random(3) + strings.ToUpper(w[:1]) + w[1:]} {
				want, _ := ref.ContainsStopWord(s)
				require.True(t, want, s)
				require.Equal(t, want, a.containsStopWord(s), s)
				checked++
			}
		}
		for range 20000 {
			s := random(8 + rng.IntN(40))
			want, _ := ref.ContainsStopWord(s)
			require.Equal(t, want, a.containsStopWord(s), s)
		}
		require.False(t, a.containsStopWord("Example-Prod-7xQ2"), "example is no stop word here")
	}
	require.Greater(t, checked, 4000, "the generic rule's stop words were checked")
}
