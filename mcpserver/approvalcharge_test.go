package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/mcpserver"
)

// TestApprovedCallIsChargedOnce: a call that waits for approval is counted
// once against the limits, whether the answer comes back in the same
// request (2025-11-25) or in the retry of a 2026-07-28 client.
func TestApprovedCallIsChargedOnce(t *testing.T) {
	for _, kind := range clientKinds {
		t.Run(kind.name, func(t *testing.T) {
			f := newFixture(t)
			withApproval(f, time.Minute)
			f.cfg.Limits.MaxCallsPerSession = 2
			f.cfg.Limits.Budget = 1
			f.cfg.Limits.Tools = map[string]configs.ToolLimits{"write_file": {Cost: 1}}
			h := &human{answer: accept(false)}
			c := kind.open(t, f.server(t), client.WithElicitationHandler(h))

			res := callTool(t, c, "write_file", writeArgs("once"))
			require.False(t, res.IsError, "the approved call is within the budget of 1: %+v", res.Content)
			require.FileExists(t, filepath.Join(f.ws, "notes/todo.md"))
			require.False(t, callTool(t, c, "read_file", map[string]any{"path": "hello.txt"}).IsError,
				"the approved call used one of the two calls")
			e := errorOf(t, callTool(t, c, "read_file", map[string]any{"path": "hello.txt"}))
			require.Equal(t, "limits.max_calls_per_session", e.Rule)
		})
	}
}

// modernCall sends one tools/call of protocol 2026-07-28 straight to the
// server, as a client that can elicit, with the given multi round-trip
// params: the way to replay or forge an answer.
func modernCall(t *testing.T, b *mcpserver.Built, name string, args map[string]any, rt mcp.MultiRoundTripParams) *mcp.CallToolResult {
	t.Helper()
	params := map[string]any{"name": name, "arguments": args,
		"_meta": map[string]any{
			mcp.MetaKeyProtocolVersion:    mcp.LATEST_PROTOCOL_VERSION,
			mcp.MetaKeyClientInfo:         map[string]any{"name": "replayer", "version": "1"},
			mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
		}}
	if rt.RequestState != "" {
		params["requestState"] = rt.RequestState
	}
	if rt.InputResponses != nil {
		params["inputResponses"] = rt.InputResponses
	}
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	require.NoError(t, err)
	resp := b.MCP().HandleMessage(context.Background(), msg)
	out, err := json.Marshal(resp)
	require.NoError(t, err)
	var envelope struct {
		Result json.RawMessage `json:"result"`
		Error  any             `json:"error"`
	}
	require.NoError(t, json.Unmarshal(out, &envelope))
	require.Nil(t, envelope.Error, string(out))
	res, err := mcp.ParseCallToolResult(&envelope.Result)
	require.NoError(t, err)
	return res
}

func accepted() mcp.InputResponses {
	return mcp.InputResponses{"toolwarden_approval": mcp.NewElicitationInputResponse(mcp.ElicitationResult{
		ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept}})}
}

// TestApprovalStateCannotSkipCharges: only an answer that carries the
// server's own, unused, unexpired state for this very call is spared the
// charge; a bogus or replayed state is charged and does not run the call.
func TestApprovalStateCannotSkipCharges(t *testing.T) {
	f := newFixture(t)
	withApproval(f, time.Minute)
	f.cfg.Limits.MaxCallsPerSession = 4
	b := f.server(t)
	args := writeArgs("replayed")
	target := filepath.Join(f.ws, "notes/todo.md")

	asked := modernCall(t, b, "write_file", args, mcp.MultiRoundTripParams{}) // call 1
	require.True(t, asked.NeedsInput())
	state := asked.RequestState
	require.NotEmpty(t, state)

	bogus := modernCall(t, b, "write_file", args, mcp.MultiRoundTripParams{RequestState: "forged." + state, InputResponses: accepted()}) // call 2
	require.True(t, bogus.NeedsInput(), "a forged state is no answer: the human is asked again")
	require.NoFileExists(t, target)

	ran := modernCall(t, b, "write_file", args, mcp.MultiRoundTripParams{RequestState: state, InputResponses: accepted()}) // not charged
	require.False(t, ran.IsError, "%+v", ran.Content)
	require.FileExists(t, target)
	require.NoError(t, os.Remove(target))

	replayed := modernCall(t, b, "write_file", args, mcp.MultiRoundTripParams{RequestState: state, InputResponses: accepted()}) // call 3
	require.True(t, replayed.NeedsInput(), "an answer runs one call")
	require.NoFileExists(t, target)

	require.False(t, modernCall(t, b, "read_file", map[string]any{"path": "hello.txt"}, mcp.MultiRoundTripParams{}).IsError) // call 4
	res := modernCall(t, b, "read_file", map[string]any{"path": "hello.txt"}, mcp.MultiRoundTripParams{})
	e := errorOf(t, res)
	require.Equal(t, toolerr.LimitExceeded, e.Code)
	require.Equal(t, "limits.max_calls_per_session", e.Rule, "the bogus and the replayed state were charged, the good one was not")
}

// TestMalformedArgumentsAreAudited: a call whose arguments are not a JSON
// object is refused, and the refusal is in the audit log like any other.
func TestMalformedArgumentsAreAudited(t *testing.T) {
	f := newFixture(t)
	b := f.server(t)
	for _, args := range []string{`"hello.txt"`, `["hello.txt"]`, `42`} {
		msg := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":` + args +
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"` + mcp.LATEST_PROTOCOL_VERSION +
			`","io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
		out, err := json.Marshal(b.MCP().HandleMessage(context.Background(), json.RawMessage(msg)))
		require.NoError(t, err)
		require.Contains(t, string(out), "args.json", args)
	}
	trail := auditTrail(t, f.auditPath)
	require.Equal(t, []string{"read_file:denied:args.json", "read_file:denied:args.json", "read_file:denied:args.json"}, trail)
}
