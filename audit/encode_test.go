package audit

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// encodingCases are entries whose every field, escaping and number form
// appendEntry must encode as encoding/json does.
var encodingCases = []Entry{
	{},
	testEntry(7),
	{Seq: 1, Time: "2026-11-24T22:00:00.123456789Z", Session: "tw-abc", Identity: "ci", Trusted: true, Replica: "r1",
		Tool: "read_file", ArgsSHA256: "ab", Rule: "allowed", Outcome: "allowed", Code: "denied.x", DurationMS: 0.125,
		Prev: genesis, Hash: "h", DroppedArgs: []string{"wait_for_previous", "x"}, Approval: "ap-1", DecidedBy: "socket uid=1000",
		Redactions: 3, ToolsSHA256: "t", Version: "v1 (abc, 2026)", PrevFile: "audit.jsonl.1", TornBytes: 12, TornFile: "audit.jsonl.torn",
		KeyID: "0123456789abcdef", Signature: "c2ln+/==", DefinitionSHA256: "sha256:d", PinnedSHA256: "sha256:p",
		Cost: "0.0025 USD", RunCost: "0.01 USD", InputTokens: 1500, OutputTokens: -500,
		ArgFindings:  []string{`content: secret aws-access-token (refuse, arguments.secrets)`, "m: marker \"<system>\""},
		Capabilities: []string{"fs:write:a.md", "net:connect:x:443"}, Spent: &Spend{Calls: 1, BytesIn: 12, BytesOut: 3456, Budget: 2},
		Call: "c-1f-7", Host: "pypi.org", Port: 443, Addr: "151.101.0.223", BytesUp: 812, BytesDown: -1, CredentialInjected: true},
	{Outcome: OutcomeEgressDenied, Call: "c", Host: "[::1]", Port: -3, Rule: "exec.network.allow"},
	{Spent: &Spend{}}, {ArgFindings: []string{}, Capabilities: []string{""}},
	{Session: `<script>&"\` + "\x00\x1f\u2028\u2029é\xff", Tool: "ünïcode 🎉", Rule: "a\tb\nc"},
	{DurationMS: 1e-7}, {DurationMS: 1e21}, {DurationMS: 123456789.5}, {DurationMS: -0.5}, {DurationMS: 1e-6},
	{DurationMS: 5e-324}, {DurationMS: math.MaxFloat64}, {DurationMS: 100}, {Redactions: -1, TornBytes: -2},
	{DroppedArgs: []string{}}, {DroppedArgs: []string{""}},
}

func TestAppendEntryIsJSONMarshal(t *testing.T) {
	for _, e := range encodingCases {
		want, err := json.Marshal(e)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendEntry(nil, &e)))
	}
}

func TestAppendEntryWritesNaNAsZero(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		e := Entry{DurationMS: f}
		var back Entry
		require.NoError(t, json.Unmarshal(appendEntry(nil, &e), &back))
		require.Zero(t, back.DurationMS)
	}
}

func FuzzAppendEntry(f *testing.F) {
	f.Add("s", "read_file", "allowed", "", 0.25, uint64(1), 0, int64(0))
	f.Add("<&>", "\u2028", "\xff", "x", 1e-9, uint64(1<<63), -5, int64(7))
	f.Fuzz(func(t *testing.T, session, tool, rule, dropped string, d float64, seq uint64, red int, torn int64) {
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return
		}
		e := Entry{Seq: seq, Session: session, Tool: tool, Rule: rule, DurationMS: d, Redactions: red, TornBytes: torn,
			DroppedArgs: []string{dropped}, Replica: session, Version: rule}
		want, err := json.Marshal(e)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendEntry(nil, &e)))
	})
}
