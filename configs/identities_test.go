package configs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOAuthAndIdentityRulesRefuseHostileConfigs: each bad value is
// refused naming its key.
func TestOAuthAndIdentityRulesRefuseHostileConfigs(t *testing.T) {
	cases := []struct{ name, yaml, key, reason string }{
		{"plain http issuer", "http: {public_url: https://t.example, oauth: {issuer: http://idp.example}}", "http.oauth.issuer", "must use https"},
		{"relative issuer", "http: {public_url: https://t.example, oauth: {issuer: /idp}}", "http.oauth.issuer", "not an absolute"},
		{"no audience", "http: {oauth: {issuer: https://idp.example}}", "http.oauth.audience", "set http.oauth.audience or http.public_url"},
		{"huge skew", "http: {oauth: {clock_skew: 1h}}", "http.oauth.clock_skew", "between 0 and"},
		{"plain http public url", "http: {public_url: http://t.example}", "http.public_url", "must use https"},
		{"rule matching no one", "identities: [{name: r, allow: [read_file]}]", "identities[0].match", "set at least one"},
		{"bad rule name", "identities: [{name: Bad Name, match: {subjects: [a]}}]", "identities[0].name", "unique lower-case"},
		{"duplicate rule", "identities: [{name: r, match: {subjects: [a]}}, {name: r, match: {subjects: [b]}}]", "identities[1].name", "unique"},
		{"bad approval mode", "identities: [{name: r, match: {subjects: [a]}, approval: {'*': maybe}}]", "identities[0].approval", "not one of"},
		{"bad capability", "identities: [{name: r, match: {subjects: [a]}, revoke: [fs]}]", "identities[0].revoke", ""},
		{"bad grant", "identities: [{name: r, match: {subjects: [a]}, grant: ['fs:read']}]", "identities[0].grant", ""},
		{"negative limit", "identities: [{name: r, match: {subjects: [a]}, limits: {budget: -1}}]", "identities[0].limits", "negative"},
		{"zero window", "limits: {window: 0s}", "limits.window", "between 0 and"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadYAML(t, tc.yaml, Options{})
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.key)
			require.Contains(t, err.Error(), tc.reason)
		})
	}
	l, err := loadYAML(t, "http: {public_url: 'https://t.example/', oauth: {issuer: 'http://127.0.0.1:4444', scopes: [mcp:tools]}}\n"+
		"identities: [{name: r, match: {scopes: [mcp:read, mcp:tools]}}]", Options{})
	require.NoError(t, err)
	require.Equal(t, "https://t.example/mcp", l.Config.HTTP.ResourceURL())
	require.Equal(t, []string{"mcp:read", "mcp:tools"}, l.Config.IdentityScopes())
}
