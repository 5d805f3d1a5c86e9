package declared

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseArg(t *testing.T) {
	for elem, want := range map[string]ArgPart{
		"-n":              {Prefix: "-n"},
		"{query}":         {Param: "query"},
		"--max-count={n}": {Prefix: "--max-count=", Param: "n"},
		"{f}.txt":         {Param: "f", Suffix: ".txt"},
		"{print $1}":      {Prefix: "{print $1}"},
		"{Upper}":         {Prefix: "{Upper}"},
	} {
		got, err := ParseArg(elem)
		require.NoError(t, err)
		require.Equal(t, want, got, elem)
	}
	_, err := ParseArg("{a}{b}")
	require.Error(t, err)
}
