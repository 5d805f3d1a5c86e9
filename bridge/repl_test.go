package bridge_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/bridge"
	fake "github.com/toolwarden/toolwarden/internal/llmfake/gemini"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

func TestREPLSavesEveryTurnAndResets(t *testing.T) {
	h := newHarness(t, setup{}, fake.Reply(fake.Text("first answer")), fake.Reply(fake.Text("after reset")))
	session := filepath.Join(t.TempDir(), "s.json")
	var out, errOut testenv.SyncBuffer
	input := "hello\n/save\n/reset\nagain\n/nope\n/quit\nnever sent\n"
	r := &bridge.REPL{Bridge: h.b, In: bridge.NewInput(strings.NewReader(input)), Out: &out, Err: &errOut, Session: session}
	require.NoError(t, r.Run(context.Background()))

	assert.Equal(t, "first answer\nafter reset\n", out.String())
	assert.Contains(t, errOut.String(), "/save needs a file name")
	assert.Contains(t, errOut.String(), "unknown command /nope")
	reqs := h.fake.Requests()
	require.Len(t, reqs, 2, "/quit stops reading")
	assert.Len(t, reqs[1].Contents(), 1, "/reset cleared the history")
	saved, err := bridge.LoadHistory(session)
	require.NoError(t, err)
	assert.Len(t, saved.Contents, 2, "the session is saved after every turn")
}

func TestREPLEndsAtEOF(t *testing.T) {
	h := newHarness(t, setup{})
	var out testenv.SyncBuffer
	r := &bridge.REPL{Bridge: h.b, In: bridge.NewInput(strings.NewReader("/tools\n")), Out: &out, Err: &out}
	require.NoError(t, r.Run(context.Background()))
	assert.Contains(t, out.String(), "read_file — Read")
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for " + what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestREPLCtrlCCancelsTheTurnOnly(t *testing.T) {
	h := newHarness(t, setup{}, fake.Turn{Hang: true}, fake.Reply(fake.Text("second answer")))
	inR, inW := io.Pipe()
	defer inW.Close()
	interrupt := make(chan os.Signal, 1)
	var out, errOut testenv.SyncBuffer
	r := &bridge.REPL{Bridge: h.b, In: bridge.NewInput(inR), Out: &out, Err: &errOut, Interrupt: interrupt}
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background()) }()

	_, _ = io.WriteString(inW, "first\n")
	waitFor(t, "the model request", func() bool { return len(h.fake.Requests()) == 1 })
	interrupt <- os.Interrupt
	waitFor(t, "the prompt again", func() bool { return strings.Contains(errOut.String(), "interrupted\n> ") })
	assert.Empty(t, h.b.History.Contents, "the interrupted turn is rolled back")

	_, _ = io.WriteString(inW, "second\n")
	waitFor(t, "the second answer", func() bool { return strings.Contains(out.String(), "second answer") })
	reqs := h.fake.Requests()
	require.Len(t, reqs, 2)
	assert.Len(t, reqs[1].Contents(), 1, "nothing of the interrupted turn is sent")
	assert.Equal(t, "second", reqs[1].LastText())

	waitFor(t, "the idle prompt", func() bool { return strings.Count(errOut.String(), "> ") == 3 })
	interrupt <- os.Interrupt // at the prompt: the REPL ends
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Ctrl-C at the prompt did not end the REPL")
	}
}

func TestREPLCtrlCDuringApprovalPrompt(t *testing.T) {
	t.Run("in-process", func(t *testing.T) {
		testREPLCtrlCDuringApprovalPrompt(t, bridge.Server{InProcess: approvalServer()}, "risky_write")
	})
	t.Run("stdio", func(t *testing.T) {
		t.Setenv(approvalServerEnv, "1")
		testREPLCtrlCDuringApprovalPrompt(t, bridge.Server{Command: os.Args[0]}, "mrtr_write")
	})
}

func testREPLCtrlCDuringApprovalPrompt(t *testing.T, srv bridge.Server, tool string) {
	inR, inW := io.Pipe()
	defer inW.Close()
	in := bridge.NewInput(inR)
	approver := &bridge.Approver{Interactive: true, In: in}
	h := newHarnessFor(t, srv, setup{approver: approver},
		fake.Reply(fake.Call("w1", tool, args("path", "a.txt"))), fake.Reply(fake.Text("hello back")))
	interrupt := make(chan os.Signal, 1)
	var out, errOut testenv.SyncBuffer
	r := &bridge.REPL{Bridge: h.b, In: in, Out: &out, Err: &errOut, Interrupt: interrupt}
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background()) }()

	_, _ = io.WriteString(inW, "write it\n")
	waitFor(t, "the approval prompt", func() bool { return strings.Contains(h.prompts.String(), "Approve? [y/N]") })
	interrupt <- os.Interrupt
	waitFor(t, "the prompt again", func() bool { return strings.Contains(errOut.String(), "interrupted\n> ") })
	assert.Contains(t, h.prompts.String(), "[approval] declined")

	// The next line is the REPL's, not the abandoned approval prompt's.
	_, _ = io.WriteString(inW, "y\n")
	waitFor(t, "the answer", func() bool { return strings.Contains(out.String(), "hello back") })
	assert.Equal(t, "y", h.fake.Requests()[1].LastText())
	require.NoError(t, inW.Close())
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("end of input did not end the REPL")
	}
}

// TestREPLEscapesControlSequences: the model's answer, a server's tool
// names and descriptions and its error codes reach the terminal with
// control characters made visible, so that they cannot retitle the
// window, clear the screen or rewrite what the user read.
func TestREPLEscapesControlSequences(t *testing.T) {
	srv := server.NewMCPServer("hostile", "1")
	srv.AddTool(mcp.NewTool("evil\x1b[2J", mcp.WithDescription("reads\x1b]0;pwned\x07 files")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return toolerr.Result(toolerr.New("nope\x1b[31m", "", "no")), nil
		})
	h := newHarness(t, setup{srv: srv},
		fake.Reply(fake.Call("e1", "evil\x1b[2J", nil)),
		fake.Reply(fake.Text("done\x1b]0;pwned\x07\r\x1b[2Kall good\u202e")))
	var out, errOut testenv.SyncBuffer
	r := &bridge.REPL{Bridge: h.b, In: bridge.NewInput(strings.NewReader("/tools\nhi\n")), Out: &out, Err: &errOut}
	require.NoError(t, r.Run(context.Background()))
	for name, s := range map[string]string{"stdout": out.String(), "stderr": errOut.String(), "activity": h.activity.String()} {
		assert.NotContains(t, s, "\x1b", name)
		assert.NotContains(t, s, "\r", name)
		assert.NotContains(t, s, "\u202e", name)
		assert.NotContains(t, s, "\x07", name)
	}
	assert.Contains(t, out.String(), `done\u001b]0;pwned\u0007\u000d\u001b[2Kall good\u202e`)
	assert.Contains(t, out.String(), `evil\u001b[2J — reads\u001b]0;pwned\u0007 files`)
	assert.Contains(t, h.activity.String(), `error nope\u001b[31m`)
}
