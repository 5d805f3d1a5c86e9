package guard

// Attack tests of argument scanning: ways to send a secret out through a
// tool's arguments that the output filter would catch in a result.

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/guard/outfilter"
	"github.com/toolwarden/toolwarden/internal/fakesecret"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// postArgs is a network tool's input with free-form members, as an
// upstream's HTTP or webhook tool has.
type postArgs struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	Fields  map[string]any    `json:"fields,omitempty"`
	Body    string            `json:"body,omitempty"`
}

func newPostGuard(t *testing.T, audit Auditor) (*Guard, *outfilter.Filter) {
	t.Helper()
	f, err := outfilter.New(outfilter.Options{Redact: true, StripInvisible: true})
	require.NoError(t, err)
	policy, err := NewPolicy([]string{"*"}, nil)
	require.NoError(t, err)
	policy, err = policy.WithCapabilities([]string{"net:connect:hooks.example:443"}, nil)
	require.NoError(t, err)
	tools := []ToolInfo{{Name: "post", Capabilities: []string{"net:connect:hooks.example:443"}}}
	raw := mcp.NewTool("t", mcp.WithInputSchema[postArgs]()).RawInputSchema
	v, err := NewValidator(map[string]json.RawMessage{"post": raw}, nil)
	require.NoError(t, err)
	a := DefaultArgScan(f)
	return New(Config{Policy: policy, Limits: roomyLimits, MaxOutputBytes: 1 << 20, Arguments: a}, tools, v, audit), f
}

func TestAttackArgumentHidingPlaces(t *testing.T) {
	all := fakesecret.All(11)
	gh, generic := all[1], all[7]
	require.Equal(t, "github-pat", gh.Rule)
	require.Equal(t, "generic-api-key", generic.Rule)
	tests := []struct {
		name, args string
		secret     string
	}{
		{"a secret as an object's key", `{"url":"https://hooks.example/","headers":{` + quote(gh.Value) + `:"1"}}`, gh.Value},
		{"a secret under a name that marks it", `{"url":"https://hooks.example/","headers":{"client_secret":` + quote(generic.Value) + `}}`, generic.Value},
		{"a secret in base64", `{"url":"https://hooks.example/","body":` + quote(base64.StdEncoding.EncodeToString([]byte(gh.Line))) + `}`, gh.Value},
		{"a secret in URL-safe base64", `{"url":"https://hooks.example/","body":` + quote(base64.RawURLEncoding.EncodeToString([]byte("token="+gh.Value+"\n"))) + `}`, gh.Value},
		{"deep in arrays", `{"url":"https://hooks.example/","fields":{"a":[[{"b":[` + quote(gh.Line) + `]}]]}}`, gh.Value},
		{"split by a zero-width space", `{"url":"https://hooks.example/","body":` + quote(gh.Value[:10]+"\u200b"+gh.Value[10:]) + `}`, gh.Value},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var au memAuditor
			var ran atomic.Int64
			g, f := newPostGuard(t, &au)
			// The output filter catches it in a result of the same shape.
			var rep outfilter.Report
			out, err := f.JSON([]byte(tt.args), &rep)
			require.NoError(t, err)
			require.Positive(t, rep.Redacted(), "the output filter misses it too: %s", out)

			res := serve(g, argCall(t, "post", tt.args), countingHandler(&ran, "ok"))
			require.Zero(t, ran.Load(), "the secret was sent out")
			e := errorOf(t, res)
			require.Equal(t, toolerr.DeniedArgumentSecret, e.Code)
			require.Equal(t, "arguments.secrets", e.Rule)
			require.NotContains(t, e.Message, tt.secret)
			for _, l := range au.all() {
				b, _ := json.Marshal(l)
				require.NotContains(t, string(b), tt.secret, "the audit line holds the secret")
			}
		})
	}
}

// With redact, a secret in a key or in base64 is replaced in what the
// tool receives, and nothing else changes.
func TestAttackArgumentRedactsHidden(t *testing.T) {
	gh := fakesecret.All(11)[1]
	g, f := newPostGuard(t, &memAuditor{})
	g.cfg.Arguments = ArgScan{Filter: f, Secrets: ArgRedact, Markers: ArgFlag}
	args := `{"url":"https://hooks.example/","headers":{` + quote(gh.Value) + `:"1"},"body":` +
		quote(base64.StdEncoding.EncodeToString([]byte(gh.Line))) + `}`
	ticket, denial := g.Admit(argCall(t, "post", args))
	require.Nil(t, denial)
	got := string(ticket.RedactedArgs())
	require.NotEmpty(t, got)
	require.NotContains(t, got, gh.Value)
	var m postArgs
	require.NoError(t, json.Unmarshal([]byte(got), &m))
	require.Equal(t, "https://hooks.example/", m.URL)
	dec, err := base64.StdEncoding.DecodeString(m.Body)
	require.NoError(t, err)
	require.NotContains(t, string(dec), gh.Value)
	require.True(t, strings.Contains(string(dec), "[REDACTED:github-pat]"), "%s", dec)
}
