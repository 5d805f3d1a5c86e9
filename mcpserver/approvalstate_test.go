package mcpserver

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/guard"
)

func TestApprovalStateIsSignedAndSingleUse(t *testing.T) {
	s := newStateSigner()
	st := approvalState{Tool: "write_file", Digest: "d1", Session: "s1", Expires: time.Now().Add(time.Minute)}
	token := s.sign(st)
	got, err := s.open(token)
	require.NoError(t, err)
	require.Equal(t, st.Digest, got.Digest)
	require.True(t, s.consume(got))
	require.False(t, s.consume(got), "an answer runs one call")

	body, sig, _ := strings.Cut(token, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(body)
	forged := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(raw), `"d1"`, `"d2"`, 1)))
	for name, bad := range map[string]string{
		"changed digest":   forged + "." + sig,
		"no signature":     body,
		"other key":        newStateSigner().sign(st),
		"garbage":          "%%%.%%%",
		"empty signature":  body + ".",
		"signature only":   "." + sig,
		"swapped halves":   sig + "." + body,
		"truncated signed": token[:len(token)-2],
	} {
		_, err := s.open(bad)
		require.ErrorIs(t, err, errBadState, name)
	}
}

// TestApprovalAnswerBindsToTheCall: an answer carried over to another
// tool, session, identity or argument digest, to larger arguments, or
// replayed, is no answer; a late one is expired.
func TestApprovalAnswerBindsToTheCall(t *testing.T) {
	a := newApprover(nil, nil)
	args := map[string]any{"path": "a.txt"}
	digest := guard.ArgsDigest(args)
	call := guard.Call{Tool: "write_file", Session: "s1", Identity: "alice", Args: args, ArgBytes: 16}
	sign := func(expires time.Time) string {
		return a.states.sign(approvalState{Tool: "write_file", Digest: digest, Session: "s1", Identity: "alice", Bytes: 16, Expires: expires})
	}
	token := sign(time.Now().Add(time.Minute))
	req := func(state string) mcp.CallToolRequest {
		r := mcp.CallToolRequest{}
		r.Params.RequestState = state
		r.Params.InputResponses = mcp.InputResponses{approvalInputID: mcp.NewElicitationInputResponse(mcp.ElicitationResult{
			ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept}})}
		return r
	}
	with := func(change func(c *guard.Call)) guard.Call {
		c := call
		change(&c)
		return c
	}
	for name, other := range map[string]guard.Call{
		"changed arguments": with(func(c *guard.Call) { c.Args = map[string]any{"path": "b.txt"} }),
		"other tool":        with(func(c *guard.Call) { c.Tool = "edit_file" }),
		"other session":     with(func(c *guard.Call) { c.Session = "s2" }),
		"other identity":    with(func(c *guard.Call) { c.Identity = "mallory" }),
		"more bytes":        with(func(c *guard.Call) { c.ArgBytes = 17 }),
	} {
		ans := a.answered(req(token), other)
		require.False(t, ans.valid() || ans.expired, name)
	}
	noAnswer := req(token)
	noAnswer.Params.InputResponses = nil
	require.False(t, a.answered(noAnswer, call).valid(), "state without an answer")
	require.True(t, a.answered(req(token), call).valid())
	require.False(t, a.answered(req(token), call).valid(), "replayed")

	late := a.answered(req(sign(time.Now().Add(-time.Second))), call)
	require.False(t, late.valid())
	require.True(t, late.expired)
}

func TestDisplaySafe(t *testing.T) {
	require.Equal(t, "line\n\tx \\u{0007}\\u{2066}", displaySafe("line\n\tx \a\u2066"))
}

// FuzzApprovalMessage: whatever a preview holds, the message the human
// sees keeps no control, invisible format character or line separator
// but newline and tab, no more than maxBlankLines empty lines in a row,
// and stays valid UTF-8.
func FuzzApprovalMessage(f *testing.F) {
	for _, s := range []string{"plain", "a\x1b[2Kb\rc", "\u202e\u200b\ufeff", "é\xff\xfe", strings.Repeat("é", 40), "a\n\n\n\n\nb", "+\n+\n+\n+\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := displaySafe(s)
		require.True(t, utf8.ValidString(out) || !utf8.ValidString(s))
		require.NotContains(t, out, strings.Repeat("\n", maxBlankLines+2))
		for _, r := range out {
			require.False(t, r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)), "%q", r)
		}
	})
}

// FuzzApprovalState: no token but the signer's own opens.
func FuzzApprovalState(f *testing.F) {
	s := newStateSigner()
	good := s.sign(approvalState{Tool: "write_file", Digest: "d", Session: "s", Expires: time.Now().Add(time.Minute)})
	f.Add(good)
	f.Add(good[:len(good)-1] + "A")
	f.Add("e30.AAAA")
	f.Fuzz(func(t *testing.T, token string) {
		st, err := s.open(token)
		if err == nil {
			require.Equal(t, good, token, "only the signed token opens: %+v", st)
		}
	})
}
