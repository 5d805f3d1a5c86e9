package configs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type bridgeCase struct {
	name string
	file string
	want []string // substrings of the error; none means it loads
}

// bridgeCases are bridge sections and what loading them says.
func bridgeCases() []bridgeCase {
	return []bridgeCase{
		{name: "none", file: "bridge:\n  currency: \"\"\n"},
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
		{name: "tiers", file: "bridge:\n  currency: USD\n  prices:\n    - {model: gemini-2.5-pro, input: \"1.25\", output: \"10\", tiers: [{prompt_tokens: 200000, input: \"2.50\", output: \"15\"}]}\n"},
		{name: "tier not above the one before", file: "bridge:\n  currency: USD\n  prices:\n    - {model: m, input: \"1\", output: \"1\", tiers: [{prompt_tokens: 100, input: \"2\", output: \"2\"}, {prompt_tokens: 100, input: \"3\", output: \"3\"}]}\n",
			want: []string{"bridge.prices[0].tiers[1].prompt_tokens: must be positive and larger than the tier before"}},
		{name: "tier without output", file: "bridge:\n  currency: USD\n  prices:\n    - {model: m, input: \"1\", output: \"1\", tiers: [{prompt_tokens: 100, input: \"2\"}]}\n",
			want: []string{"bridge.prices[0].tiers[0].output: is missing"}},
		{name: "api key env that is a key", file: "bridge:\n  api_key_env: AIza-123\n", want: []string{"bridge.api_key_env: is not an environment variable name"}},
	}
}

func TestBridgePrices(t *testing.T) {
	for _, tt := range bridgeCases() {
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

// LoadBridge (gemini --bridge-config) checks the bridge section as Load
// does, and refuses every section but bridge and secrets.
func TestLoadBridgeValidatesAsLoad(t *testing.T) {
	for _, tt := range bridgeCases() {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bridge.yaml")
			require.NoError(t, os.WriteFile(p, []byte(tt.file), 0o600))
			_, err := LoadBridge(p)
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
	p := filepath.Join(t.TempDir(), "bridge.yaml")
	require.NoError(t, os.WriteFile(p, []byte("bridge:\n  currency: USD\ncapabilities:\n  grant: ['net:connect:*']\n"), 0o600))
	_, err := LoadBridge(p)
	require.ErrorContains(t, err, "capabilities: --bridge-config reads only the bridge: and secrets: sections")

	key := writeMode(t, "key", "k\n", 0o600)
	require.NoError(t, os.WriteFile(p, []byte("bridge:\n  currency: USD\n  api_key_file: "+key+"\n  prices:\n    - {model: m, input: 0.30, output: \"1\", tiers: [{prompt_tokens: 5, input: \"2\", output: \"3\"}]}\n"), 0o600))
	b, err := LoadBridge(p)
	require.NoError(t, err)
	assert.Equal(t, "0.30", b.Prices[0].Input)
	assert.Equal(t, []PriceTier{{PromptTokens: 5, Input: "2", Output: "3"}}, b.Prices[0].Tiers)
	v, err := b.Secret(context.Background(), b.APIKeyRef())
	require.NoError(t, err)
	assert.Equal(t, "k", v, "the section's secrets are bound")
}

// SecretEnv names the variables a server the bridge starts must not see.
func TestBridgeSecretEnv(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bridge.yaml")
	require.NoError(t, os.WriteFile(p, []byte("bridge:\n  api_key_env: TEAM_KEY\n"), 0o600))
	b, err := LoadBridge(p)
	require.NoError(t, err)
	assert.Equal(t, []string{"TEAM_KEY"}, b.SecretEnv())
	require.NoError(t, os.WriteFile(p, []byte("bridge:\n  api_key_vault: secret/data/g#k\nsecrets:\n  vault: {address: https://vault.example, token_env: BAO_TOKEN}\n"), 0o600))
	b, err = LoadBridge(p)
	require.NoError(t, err)
	assert.Equal(t, []string{"BAO_TOKEN"}, b.SecretEnv())
}
