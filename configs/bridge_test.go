package configs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBridgePrices(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string // substrings of the error; none means it loads
	}{
		{name: "none", file: "log:\n  level: info\n"},
		{name: "table and budget", file: "bridge:\n  currency: USD\n  prices:\n    - {model: gemini-2.5-flash, input: \"0.30\", output: \"2.50\", cached_input: \"0.075\"}\n" +
			"  budget: {max_per_run: \"1.00\", max_per_call: \"0.10\"}\n"},
		{name: "unquoted numbers", file: "bridge:\n  currency: EUR\n  prices:\n    - {model: gemini-2.5-pro, input: 1.25, output: 10}\n"},
		{name: "bad output price names the key", file: "bridge:\n  currency: USD\n  prices:\n    - {model: m, input: \"0.30\", output: \"2,50\"}\n",
			want: []string{"bridge.prices[0].output:", `"2,50" is not a decimal amount`}},
		{name: "negative", file: "bridge:\n  currency: USD\n  prices:\n    - {model: m, input: \"-1\", output: \"1\"}\n",
			want: []string{"bridge.prices[0].input:"}},
		{name: "missing output", file: "bridge:\n  currency: USD\n  prices:\n    - {model: m, input: \"1\"}\n",
			want: []string{"bridge.prices[0].output: is missing"}},
		{name: "float noise refused", file: "bridge:\n  currency: USD\n  prices:\n    - {model: m, input: \"0.1e-3\", output: \"1\"}\n",
			want: []string{"bridge.prices[0].input:"}},
		{name: "model twice", file: "bridge:\n  currency: USD\n  prices:\n    - {model: m, input: \"1\", output: \"1\"}\n    - {model: m, input: \"2\", output: \"2\"}\n",
			want: []string{"bridge.prices[1].model:", "priced twice"}},
		{name: "no model", file: "bridge:\n  currency: USD\n  prices:\n    - {input: \"1\", output: \"1\"}\n",
			want: []string{"bridge.prices[0].model: names no model"}},
		{name: "no currency", file: "bridge:\n  prices:\n    - {model: m, input: \"1\", output: \"1\"}\n",
			want: []string{"bridge.currency:", "currency code"}},
		{name: "lowercase currency", file: "bridge:\n  currency: usd\n  prices:\n    - {model: m, input: \"1\", output: \"1\"}\n",
			want: []string{"bridge.currency:"}},
		{name: "bad budget", file: "bridge:\n  currency: USD\n  prices:\n    - {model: m, input: \"1\", output: \"1\"}\n  budget: {max_per_call: lots}\n",
			want: []string{"bridge.budget.max_per_call:", `"lots" is not a decimal amount`}},
		{name: "budget without prices", file: "bridge:\n  currency: USD\n  budget: {max_per_run: \"1\"}\n",
			want: []string{"bridge.budget:", "needs bridge.prices"}},
		{name: "unknown key", file: "bridge:\n  currency: USD\n  prices:\n    - {model: m, input: \"1\", output: \"1\", outptu: \"1\"}\n",
			want: []string{"outptu"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadYAML(t, tt.file, Options{})
			if len(tt.want) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tt.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
}

func TestBridgeUnquotedPriceIsExact(t *testing.T) {
	l, err := loadYAML(t, "bridge:\n  currency: USD\n  prices:\n    - {model: gemini-2.5-flash, input: 0.30, output: 2.5}\n", Options{})
	require.NoError(t, err)
	require.Len(t, l.Config.Bridge.Prices, 1)
	assert.Equal(t, "gemini-2.5-flash", l.Config.Bridge.Prices[0].Model)
	assert.Equal(t, "0.3", l.Config.Bridge.Prices[0].Input)
	assert.Equal(t, "2.5", l.Config.Bridge.Prices[0].Output)
}
