package configs

import (
	"fmt"

	"github.com/toolwarden/toolwarden/internal/lazyregexp"
	"github.com/toolwarden/toolwarden/internal/money"
)

// Bridge configures what `toolwarden gemini` may spend (docs/gemini.md):
// the price of each model's tokens and the budget, in one currency.
// Amounts are decimal text ("0.30"), read into integer micro-units, never
// floats.
type Bridge struct {
	// SecretSources is where the API key comes from (bound by Load).
	SecretSources `mapstructure:"-" yaml:"-" json:"-"`
	// Currency is the ISO 4217 code the prices and budget are in (USD).
	Currency string       `mapstructure:"currency" yaml:"currency"`
	Prices   []ModelPrice `mapstructure:"prices" yaml:"prices"`
	Budget   BridgeBudget `mapstructure:"budget" yaml:"budget"`
	// APIKeyEnv, APIKeyFile or APIKeyVault holds the Gemini API key
	// (secrets.go); none set is GEMINI_API_KEY, else GOOGLE_API_KEY.
	APIKeyEnv   string `mapstructure:"api_key_env" yaml:"api_key_env"`
	APIKeyFile  string `mapstructure:"api_key_file" yaml:"api_key_file"`
	APIKeyVault string `mapstructure:"api_key_vault" yaml:"api_key_vault"`
}

// ModelPrice is one model's price per million tokens. A list rather than
// a map keyed by model: model names hold dots, the config's key separator.
type ModelPrice struct {
	Model  string `mapstructure:"model" yaml:"model"`
	Input  string `mapstructure:"input" yaml:"input"`
	Output string `mapstructure:"output" yaml:"output"`
	// CachedInput prices the prompt tokens served from a context cache;
	// empty is Input's price.
	CachedInput string `mapstructure:"cached_input" yaml:"cached_input"`
	// Tiers price a request whose prompt is longer than a tier's
	// PromptTokens at the tier's prices instead, all of its tokens (as
	// Gemini 2.5 Pro is priced above 200k prompt tokens); the longest
	// tier passed applies.
	Tiers []PriceTier `mapstructure:"tiers" yaml:"tiers"`
}

// PriceTier is a model's price per million tokens for prompts of more
// than PromptTokens tokens.
type PriceTier struct {
	PromptTokens int64  `mapstructure:"prompt_tokens" yaml:"prompt_tokens"`
	Input        string `mapstructure:"input" yaml:"input"`
	Output       string `mapstructure:"output" yaml:"output"`
	CachedInput  string `mapstructure:"cached_input" yaml:"cached_input"`
}

// BridgeBudget caps the spend of one run of the bridge (one prompt, or a
// whole REPL session) and of one model request; empty is no cap.
type BridgeBudget struct {
	MaxPerRun  string `mapstructure:"max_per_run" yaml:"max_per_run"`
	MaxPerCall string `mapstructure:"max_per_call" yaml:"max_per_call"`
}

var currencyCode = lazyregexp.New(`^[A-Z]{3}$`)

func (b Bridge) validate(add func(string, string, ...any)) {
	priced := len(b.Prices) > 0 || b.Budget != (BridgeBudget{})
	if priced && !currencyCode.MatchString(b.Currency) {
		add("bridge.currency", "%q is not a currency code (three capital letters, e.g. USD); prices and budget need one", b.Currency)
	}
	seen := map[string]bool{}
	for i, p := range b.Prices {
		key := fmt.Sprintf("bridge.prices[%d]", i)
		switch {
		case p.Model == "":
			add(key+".model", "names no model")
		case seen[p.Model]:
			add(key+".model", "%q is priced twice", p.Model)
		}
		seen[p.Model] = true
		amount(add, key+".input", p.Input, true)
		amount(add, key+".output", p.Output, true)
		amount(add, key+".cached_input", p.CachedInput, false)
		var last int64
		for j, tier := range p.Tiers {
			tkey := fmt.Sprintf("%s.tiers[%d]", key, j)
			if tier.PromptTokens <= last {
				add(tkey+".prompt_tokens", "must be positive and larger than the tier before")
			}
			last = tier.PromptTokens
			amount(add, tkey+".input", tier.Input, true)
			amount(add, tkey+".output", tier.Output, true)
			amount(add, tkey+".cached_input", tier.CachedInput, false)
		}
	}
	amount(add, "bridge.budget.max_per_run", b.Budget.MaxPerRun, false)
	amount(add, "bridge.budget.max_per_call", b.Budget.MaxPerCall, false)
	if b.APIKeyEnv != "" && !envVarName.MatchString(b.APIKeyEnv) {
		add("bridge.api_key_env", "is not an environment variable name; name the variable that holds the key, never the key itself")
	}
	if b.Budget != (BridgeBudget{}) && len(b.Prices) == 0 {
		add("bridge.budget", "a budget needs bridge.prices to count spend against")
	}
}

func amount(add func(string, string, ...any), key, s string, required bool) {
	if s == "" {
		if required {
			add(key, "is missing: a price per million tokens, e.g. \"0.30\"")
		}
		return
	}
	if _, err := money.Parse(s); err != nil {
		add(key, "%v", err)
	}
}

// SecretEnv names the variables holding the bridge's secrets besides
// GEMINI_API_KEY and GOOGLE_API_KEY: api_key_env, and the Vault token's
// variable when the key comes from Vault. A server the bridge starts
// must not inherit them.
func (b Bridge) SecretEnv() []string {
	var out []string
	if b.APIKeyEnv != "" {
		out = append(out, b.APIKeyEnv)
	}
	if b.APIKeyVault != "" && b.s != nil && b.s.Vault.TokenEnv != "" {
		out = append(out, b.s.Vault.TokenEnv)
	}
	return out
}
