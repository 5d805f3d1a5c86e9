package guard

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPermitsConnect: a connection the network block allows is the
// caller's only when it holds net:connect:host:port; the default grant
// (net:connect:**:*) gives it, a base deny or an identity's revoke or
// narrower grant takes it away, each naming its rule.
func TestPermitsConnect(t *testing.T) {
	layers := []IdentityLayer{
		{Name: "no-net", Match: IdentityMatch{Identities: []string{"ci"}}, Revoke: caps(t, "net:connect:**:*")},
		{Name: "pypi-only", Match: IdentityMatch{Subjects: []string{"bot"}}, Grant: caps(t, "fs:read:**", "net:connect:pypi.org:443")},
	}
	g := New(Config{Policy: policyOf(t, []string{"*"}, nil, []string{"net:connect:**:*"}, []string{"net:connect:*.internal.test:*"}),
		Identities: layers}, nil, nil, nil)
	tests := []struct {
		name, identity string
		claims         Claims
		host           string
		port           uint16
		rule           string
		ok             bool
	}{
		{"default grant", "local", Claims{}, "localhost", 8443, "capabilities.granted", true},
		{"an IP", "local", Claims{}, "10.0.0.5", 80, "capabilities.granted", true},
		{"a bracketed IPv6", "local", Claims{}, "[fd00::5]", 443, "capabilities.granted", true},
		{"base deny", "local", Claims{}, "db.internal.test", 5432, `capabilities.deny:"net:connect:*.internal.test:*"`, false},
		{"identity revoke", "ci", Claims{}, "localhost", 8443, `identities[no-net].revoke:"net:connect:**:*"`, false},
		{"identity grant covers", "oauth:bot@i", Claims{Subject: "bot"}, "pypi.org", 443, "capabilities.granted", true},
		{"identity grant narrows", "oauth:bot@i", Claims{Subject: "bot"}, "files.pythonhosted.org", 443, "identities[pypi-only].grant", false},
		{"identity grant, other port", "oauth:bot@i", Claims{Subject: "bot"}, "pypi.org", 80, "identities[pypi-only].grant", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule, ok := g.PermitsConnect(Call{Identity: tt.identity, Claims: tt.claims}, tt.host, tt.port)
			require.Equal(t, tt.ok, ok)
			require.Equal(t, tt.rule, rule)
		})
	}

	narrow := New(Config{Policy: policyOf(t, []string{"*"}, nil, []string{"fs:read:**"}, nil)}, nil, nil, nil)
	rule, ok := narrow.PermitsConnect(Call{Identity: "local"}, "localhost", 8443)
	require.False(t, ok, "a grant list without net:connect grants no connection")
	require.Equal(t, "capabilities.missing", rule)
}

// TestCallIDOnEveryLine: the call ID the server gives a call is on its
// decision and end lines, which the egress lines of its sandbox name.
func TestCallIDOnEveryLine(t *testing.T) {
	a := &memAuditor{}
	g := newTestGuard(t, a, roomyLimits)
	var n atomic.Int64
	serve(g, Call{Tool: "read_file", Session: "s", Args: map[string]any{"path": "a"}, CallID: "c-1"}, countingHandler(&n, "ok"))
	lines := a.all()
	require.Len(t, lines, 2)
	for _, e := range lines {
		require.Equal(t, "c-1", e.Call, "%+v", e)
	}
}
