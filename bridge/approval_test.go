package bridge_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/bridge"
	fake "github.com/toolwarden/toolwarden/internal/llmfake/gemini"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// approvalServer has one tool that asks for approval through elicitation
// before it "writes", as toolwarden's approval step does.
func approvalServer() *server.MCPServer {
	s := server.NewMCPServer("approval-test", "1", server.WithElicitation())
	tool := mcp.NewTool("risky_write", mcp.WithString("path", mcp.Required()),
		mcp.WithReadOnlyHintAnnotation(false), mcp.WithDestructiveHintAnnotation(true))
	s.AddTool(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		path := req.GetString("path", "")
		res, err := s.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
			Message: "risky_write: overwrite " + path + " with 12 bytes",
			RequestedSchema: map[string]any{"type": "object",
				"properties": map[string]any{"approve": map[string]any{"type": "boolean"}, "remember": map[string]any{"type": "boolean"}},
				"required":   []any{"approve"}},
		}})
		if err != nil {
			return toolerr.Result(toolerr.New(toolerr.DeniedApprovalUnavailable, "", "%v", err)), nil
		}
		if res.Action != mcp.ElicitationResponseActionAccept {
			return toolerr.Result(toolerr.New(toolerr.DeniedApprovalDeclined, "ask the user", "the user declined")), nil
		}
		return mcp.NewToolResultText(fmt.Sprintf("written; answer=%v", res.Content)), nil
	})
	// mrtr_write asks the way protocol 2026-07-28 servers do (and issue 7's
	// approvals will): an input_required result, answered by a retry.
	s.AddTool(mcp.NewTool("mrtr_write", mcp.WithString("path", mcp.Required()), mcp.WithReadOnlyHintAnnotation(false)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			answer := server.ElicitationResponse(req.Params.InputResponses, "approve")
			if answer == nil {
				return server.NewInputRequestBuilder("").Elicit("approve", mcp.ElicitationParams{
					Message:         "mrtr_write: overwrite " + req.GetString("path", "") + " with 12 bytes",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"approve": map[string]any{"type": "boolean"}}, "required": []any{"approve"}},
				}).ToolResult(), nil
			}
			if answer.Action != mcp.ElicitationResponseActionAccept {
				return toolerr.Result(toolerr.New(toolerr.DeniedApprovalDeclined, "", "the user declined")), nil
			}
			return mcp.NewToolResultText(fmt.Sprintf("written; answer=%v", answer.Content)), nil
		})
	return s
}

// TestMain lets the test binary serve approvalServer over stdio, so the
// bridge can be tested against a separate process.
func TestMain(m *testing.M) {
	if os.Getenv(approvalServerEnv) == "1" {
		if err := server.ServeStdio(approvalServer()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const approvalServerEnv = "BRIDGE_TEST_APPROVAL_SERVER"

func TestApprovalOverStdio(t *testing.T) {
	t.Setenv(approvalServerEnv, "1")
	for _, yes := range []bool{false, true} {
		h := newHarnessFor(t, bridge.Server{Command: os.Args[0]}, setup{approver: &bridge.Approver{Yes: yes}},
			fake.Reply(fake.Call("w1", "mrtr_write", args("path", "b.txt"))), fake.Reply(fake.Text("ok")))
		_, err := h.b.Ask(context.Background(), "write it")
		require.NoError(t, err)
		e := approvalError(t, h)
		assert.Contains(t, h.prompts.String(), "mrtr_write: overwrite b.txt with 12 bytes")
		if yes {
			assert.Nil(t, e)
		} else {
			require.NotNil(t, e)
			assert.Equal(t, "denied.approval_declined", e["code"])
		}
	}
}

func TestApprovalMultiRoundTripInProcess(t *testing.T) {
	h := newHarness(t, setup{srv: approvalServer(), approver: &bridge.Approver{Yes: true}},
		fake.Reply(fake.Call("w1", "mrtr_write", args("path", "c.txt"))), fake.Reply(fake.Text("ok")))
	_, err := h.b.Ask(context.Background(), "write it")
	require.NoError(t, err)
	assert.Nil(t, approvalError(t, h))
	assert.Contains(t, h.log.String(), "mrtr_write: overwrite c.txt")
}

func approvalTurns(path string) []fake.Turn {
	return []fake.Turn{fake.Reply(fake.Call("w1", "risky_write", args("path", path))), fake.Reply(fake.Text("ok"))}
}

func approvalError(t *testing.T, h *harness) map[string]any {
	t.Helper()
	resp := h.fake.Requests()[1].FunctionResponses()[0]["response"].(map[string]any)
	e, _ := resp["error"].(map[string]any)
	return e
}

func TestApprovalDeclinedWhenNotInteractive(t *testing.T) {
	h := newHarness(t, setup{srv: approvalServer(), approver: &bridge.Approver{In: bridge.NewInput(strings.NewReader("y\n"))}},
		approvalTurns("config.yaml")...)
	_, err := h.b.Ask(context.Background(), "write it")
	require.NoError(t, err)
	e := approvalError(t, h)
	require.NotNil(t, e)
	assert.Equal(t, "denied.approval_declined", e["code"], "a \"y\" on a non-terminal stdin is not an answer")
	assert.Contains(t, h.prompts.String(), "risky_write: overwrite config.yaml with 12 bytes", "the action is shown")
	assert.Contains(t, h.prompts.String(), "declined: no terminal")
}

func TestApprovalYesAcceptsAndIsLogged(t *testing.T) {
	h := newHarness(t, setup{srv: approvalServer(), approver: &bridge.Approver{Yes: true}}, approvalTurns("config.yaml")...)
	_, err := h.b.Ask(context.Background(), "write it")
	require.NoError(t, err)
	assert.Nil(t, approvalError(t, h))
	out := mustJSON(h.fake.Requests()[1].FunctionResponses()[0]["response"])
	assert.Contains(t, out, "approve:true", "required booleans are answered yes")
	assert.NotContains(t, out, "remember", "optional widenings are left out")
	assert.Contains(t, h.log.String(), "approval accepted by --yes")
	assert.Contains(t, h.log.String(), "risky_write: overwrite config.yaml")
}

func TestApprovalOnTerminal(t *testing.T) {
	for answer, accepted := range map[string]bool{"y\n": true, "YES\n": true, "n\n": false, "\n": false, "": false, "sure\n": false} {
		approver := &bridge.Approver{Interactive: true, In: bridge.NewInput(strings.NewReader(answer))}
		h := newHarness(t, setup{srv: approvalServer(), approver: approver}, approvalTurns("a.txt")...)
		_, err := h.b.Ask(context.Background(), "write it")
		require.NoError(t, err)
		assert.Equal(t, accepted, approvalError(t, h) == nil, "answer %q", answer)
		assert.Contains(t, h.prompts.String(), "Approve? [y/N]")
	}
}

func TestApprovalPromptShowsControlCharactersEscaped(t *testing.T) {
	// The path comes from the model: it must not be able to rewrite the
	// terminal line that shows the action.
	h := newHarness(t, setup{srv: approvalServer(), approver: &bridge.Approver{}}, approvalTurns("a.txt\r\x1b[2Kharmless.txt\u202e")...)
	_, err := h.b.Ask(context.Background(), "write it")
	require.NoError(t, err)
	shown := h.prompts.String()
	assert.NotContains(t, shown, "\x1b")
	assert.NotContains(t, shown, "\r")
	assert.NotContains(t, shown, "\u202e")
	assert.Contains(t, shown, `a.txt\u000d\u001b[2Kharmless.txt\u202e`)
}

func TestYesNeverOverridesGuardDenial(t *testing.T) {
	srv := toolwardenServer(t, "read_file")
	h := newHarness(t, setup{srv: srv, approver: &bridge.Approver{Yes: true}},
		fake.Reply(fake.Call("d1", "read_file", args("path", "hello.txt"))), fake.Reply(fake.Text("denied")))
	_, err := h.b.Ask(context.Background(), "read")
	require.NoError(t, err)
	e := approvalError(t, h)
	require.NotNil(t, e)
	assert.Equal(t, "denied.not_allowed", e["code"])
	assert.NotContains(t, h.log.String(), "accepted by --yes")
}

func TestAcceptGrantsOnlyThisCall(t *testing.T) {
	for name, tc := range map[string]struct {
		schema map[string]any
		want   map[string]any
	}{
		"boolean": {map[string]any{"properties": map[string]any{"approve": map[string]any{"type": "boolean"}}, "required": []any{"approve"}},
			map[string]any{"approve": true}},
		"optional left out": {map[string]any{"properties": map[string]any{"approve": map[string]any{"type": "boolean"}, "remember": map[string]any{"type": "boolean"}}, "required": []any{"approve"}},
			map[string]any{"approve": true}},
		"required widening boolean": {map[string]any{"properties": map[string]any{"approve_for_session": map[string]any{"type": "boolean"}}, "required": []any{"approve_for_session"}},
			map[string]any{"approve_for_session": false}},
		"enum with session first": {map[string]any{"properties": map[string]any{"decision": map[string]any{"type": "string", "enum": []any{"deny", "approve_session", "approve_once"}}}, "required": []any{"decision"}},
			map[string]any{"decision": "approve_once"}},
		"no schema": {nil, map[string]any{}},
	} {
		t.Run(name, func(t *testing.T) {
			approver := &bridge.Approver{Yes: true, Out: &testenv.SyncBuffer{}, Log: quietLog()}
			var schema any
			if tc.schema != nil {
				schema = map[string]any{"type": "object", "properties": tc.schema["properties"], "required": tc.schema["required"]}
			}
			res, err := approver.Elicit(context.Background(), mcp.ElicitationRequest{Params: mcp.ElicitationParams{Message: "m", RequestedSchema: schema}})
			require.NoError(t, err)
			assert.Equal(t, mcp.ElicitationResponseActionAccept, res.Action)
			assert.Equal(t, tc.want, res.Content)
		})
	}
}
