package toolerr_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

func TestQuote(t *testing.T) {
	require.Equal(t, `"a\x00b"`, toolerr.Quote("a\x00b"), "control characters are escaped")
	long := toolerr.Quote(strings.Repeat("é", 60))
	require.True(t, strings.HasSuffix(long, `"…`), "over 80 bytes is cut: %s", long)
	require.LessOrEqual(t, len(long), 80+len(`""…`))
	require.NotContains(t, long, `\x`, "a rune cut in half is dropped, not escaped")
}
