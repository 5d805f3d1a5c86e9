package outfilter

import (
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/fakesecret"
)

// New compiles nothing: the rules are built at the first use, and uses
// that arrive together all wait for that one build and are all filtered.
func TestRulesBuiltAtFirstUse(t *testing.T) {
	f, err := New(DefaultOptions())
	require.NoError(t, err)
	require.Nil(t, f.keys, "nothing built before the first use")
	secrets := fakesecret.All(1)
	var wg sync.WaitGroup
	got := make([]string, len(secrets))
	for i, s := range secrets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _, err := f.Result(mcp.NewToolResultText(s.Line))
			if err == nil {
				got[i] = res.Content[0].(mcp.TextContent).Text
			}
		}()
	}
	wg.Wait()
	require.NotNil(t, f.keys, "built by the first use")
	for i, s := range secrets {
		require.Contains(t, got[i], Redaction(s.Rule), s.Rule)
		require.NotContains(t, got[i], s.Value, s.Rule)
	}
}
