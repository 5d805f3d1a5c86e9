package mcpserver_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/mcpserver"
)

// human is a scripted person behind a client's elicitation handler.
type human struct {
	mu     sync.Mutex
	asked  []mcp.ElicitationRequest
	answer func(ctx context.Context) (*mcp.ElicitationResult, error)
}

func (h *human) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	h.mu.Lock()
	h.asked = append(h.asked, req)
	answer := h.answer
	h.mu.Unlock()
	return answer(ctx)
}

func (h *human) says(f func(ctx context.Context) (*mcp.ElicitationResult, error)) {
	h.mu.Lock()
	h.answer = f
	h.mu.Unlock()
}

func (h *human) questions() []mcp.ElicitationRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]mcp.ElicitationRequest(nil), h.asked...)
}

func accept(identical bool) func(context.Context) (*mcp.ElicitationResult, error) {
	return func(context.Context) (*mcp.ElicitationResult, error) {
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
			Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"approve_identical": identical}}}, nil
	}
}

func answer(action mcp.ElicitationResponseAction) func(context.Context) (*mcp.ElicitationResult, error) {
	return func(context.Context) (*mcp.ElicitationResult, error) {
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: action}}, nil
	}
}

// slowAccept answers after d, or gives up when the server stops waiting.
func slowAccept(d time.Duration) func(context.Context) (*mcp.ElicitationResult, error) {
	return func(ctx context.Context) (*mcp.ElicitationResult, error) {
		select {
		case <-time.After(d):
			return accept(false)(ctx)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// withApproval makes the fixture ask, as the default policy does.
func withApproval(f *fixture, timeout time.Duration) {
	f.cfg.Approval.Modes = nil
	f.cfg.Approval.Timeout = timeout
}

// clientKind opens a client of one transport and protocol generation.
type clientKind struct {
	name string
	open func(t *testing.T, b *mcpserver.Built, opts ...client.ClientOption) *client.Client
}

const legacyVersion = "2025-11-25"

var clientKinds = []clientKind{
	{"inprocess-2025", func(t *testing.T, b *mcpserver.Built, opts ...client.ClientOption) *client.Client {
		c, err := client.NewInProcessClientWithOptions(b.MCP(), opts...)
		require.NoError(t, err)
		return start(t, c, legacyVersion)
	}},
	{"inprocess-2026", func(t *testing.T, b *mcpserver.Built, opts ...client.ClientOption) *client.Client {
		c, err := client.NewInProcessClientWithOptions(b.MCP(), opts...)
		require.NoError(t, err)
		return start(t, c, mcp.LATEST_PROTOCOL_VERSION)
	}},
	{"http-2025", func(t *testing.T, b *mcpserver.Built, opts ...client.ClientOption) *client.Client {
		return start(t, approvalHTTPClient(t, b, opts...), legacyVersion)
	}},
	{"http-2026", func(t *testing.T, b *mcpserver.Built, opts ...client.ClientOption) *client.Client {
		return start(t, approvalHTTPClient(t, b, opts...), mcp.LATEST_PROTOCOL_VERSION)
	}},
}

func approvalHTTPClient(t *testing.T, b *mcpserver.Built, opts ...client.ClientOption) *client.Client {
	h, stop := b.HTTPHandler(mcpserver.HTTPOptions{Token: testToken, MaxBodyBytes: 1 << 20, MaxSessions: 10, IdleTimeout: time.Minute})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		stop(context.Background())
		srv.Close()
	})
	tr, err := transport.NewStreamableHTTP(srv.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + testToken}))
	require.NoError(t, err)
	return client.NewClient(tr, opts...)
}

func start(t *testing.T, c *client.Client, version string) *client.Client {
	t.Helper()
	require.NoError(t, c.Start(ctxT(t)))
	t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "approval-test", Version: "1"}
	_, err := c.Initialize(ctxT(t), init)
	require.NoError(t, err)
	require.Equal(t, version, c.ProtocolVersion())
	return c
}

func writeArgs(content string) map[string]any {
	return map[string]any{"path": "notes/todo.md", "content": content, "create_dirs": true}
}

// auditTrail lists "tool:outcome:rule" for every audit line.
func auditTrail(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for _, e := range audittest.Entries(t, path) {
		out = append(out, e.Tool+":"+string(e.Outcome)+":"+e.Rule)
	}
	return out
}

func TestApprovalOverClients(t *testing.T) {
	for _, kind := range clientKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Run("accepted", func(t *testing.T) {
				f := newFixture(t)
				withApproval(f, time.Minute)
				h := &human{answer: accept(false)}
				c := kind.open(t, f.server(t), client.WithElicitationHandler(h))
				res := callTool(t, c, "write_file", writeArgs("- ship it\n"))
				require.False(t, res.IsError, "%+v", res.Content)
				got, err := os.ReadFile(filepath.Join(f.ws, "notes/todo.md"))
				require.NoError(t, err)
				require.Equal(t, "- ship it\n", string(got))

				q := h.questions()
				require.Len(t, q, 1)
				msg := q[0].Params.Message
				require.True(t, strings.HasPrefix(msg, "Create file notes/todo.md (10 bytes, creating notes if missing)"), msg)
				require.Contains(t, msg, "+- ship it")
				require.Contains(t, msg, "expires in 1m0s")
				require.Contains(t, mustJSON(t, q[0].Params.RequestedSchema), `"approve_identical"`)
				trail := auditTrail(t, f.auditPath)
				require.Contains(t, trail, "write_file:needs_approval:approval.elicit")
				require.Contains(t, trail, "write_file:approved:approval.elicit")
				require.Equal(t, "write_file:completed:allowed", trail[len(trail)-1])

				// Without "approve identical", the same call asks again.
				callTool(t, c, "write_file", writeArgs("- ship it\n"))
				require.Len(t, h.questions(), 2)
			})
			t.Run("declined", func(t *testing.T) {
				f := newFixture(t)
				withApproval(f, time.Minute)
				h := &human{answer: answer(mcp.ElicitationResponseActionDecline)}
				c := kind.open(t, f.server(t), client.WithElicitationHandler(h))
				e := errorOf(t, callTool(t, c, "write_file", writeArgs("x")))
				require.Equal(t, toolerr.DeniedApprovalDeclined, e.Code)
				require.Equal(t, "approval.declined", e.Rule)
				require.NoFileExists(t, filepath.Join(f.ws, "notes/todo.md"))
				require.Contains(t, auditTrail(t, f.auditPath), "write_file:declined:approval.declined")

				h.says(answer(mcp.ElicitationResponseActionCancel))
				e = errorOf(t, callTool(t, c, "delete_file", map[string]any{"path": "hello.txt"}))
				require.Equal(t, toolerr.DeniedApprovalDeclined, e.Code)
				require.Contains(t, e.Message, "cancelled")
				require.FileExists(t, filepath.Join(f.ws, "hello.txt"))
			})
			t.Run("timed out", func(t *testing.T) {
				f := newFixture(t)
				withApproval(f, 300*time.Millisecond)
				h := &human{answer: slowAccept(time.Second)}
				c := kind.open(t, f.server(t), client.WithElicitationHandler(h))
				e := errorOf(t, callTool(t, c, "write_file", writeArgs("late")))
				require.Equal(t, toolerr.DeniedApprovalTimeout, e.Code)
				require.Contains(t, e.Message, "approval.timeout (300ms)")
				require.NoFileExists(t, filepath.Join(f.ws, "notes/todo.md"))
				require.Contains(t, auditTrail(t, f.auditPath), "write_file:declined:approval.timeout")
			})
			t.Run("identical calls for the session", func(t *testing.T) {
				f := newFixture(t)
				withApproval(f, time.Minute)
				h := &human{answer: accept(true)}
				c := kind.open(t, f.server(t), client.WithElicitationHandler(h))
				require.False(t, callTool(t, c, "write_file", writeArgs("v1")).IsError)
				require.False(t, callTool(t, c, "write_file", writeArgs("v1")).IsError)
				remembered := 1
				if strings.HasPrefix(kind.name, "http-2026") {
					// The stateless protocol has no session to remember it for.
					remembered = 2
				}
				require.Len(t, h.questions(), remembered)
				require.False(t, callTool(t, c, "write_file", writeArgs("v2")).IsError, "changed arguments ask again")
				require.Len(t, h.questions(), remembered+1)
				if remembered == 1 {
					require.Contains(t, auditTrail(t, f.auditPath), "write_file:approved:approval.elicit.session")
					require.Contains(t, auditTrail(t, f.auditPath), "write_file:approved:approval.session")
				}
			})
			t.Run("client without elicitation", func(t *testing.T) {
				f := newFixture(t)
				withApproval(f, time.Minute)
				c := kind.open(t, f.server(t))
				e := errorOf(t, callTool(t, c, "write_file", writeArgs("x")))
				require.Equal(t, toolerr.DeniedApprovalUnavailable, e.Code)
				require.Contains(t, e.Hint, "approval.modes")
				require.Contains(t, e.Hint, "--approval")
				require.NoFileExists(t, filepath.Join(f.ws, "notes/todo.md"))
			})
			t.Run("client with URL elicitation only", func(t *testing.T) {
				f := newFixture(t)
				withApproval(f, time.Minute)
				h := &human{answer: accept(false)}
				c := kind.open(t, f.server(t), client.WithElicitationHandler(h), client.WithClientCapabilities(
					mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{URL: &struct{}{}}}))
				e := errorOf(t, callTool(t, c, "write_file", writeArgs("x")))
				require.Equal(t, toolerr.DeniedApprovalUnavailable, e.Code, "the question is a form")
				require.Empty(t, h.questions())
			})
		})
	}
}

func TestApprovalModes(t *testing.T) {
	f := newFixture(t)
	withApproval(f, time.Minute)
	f.cfg.Approval.Modes = map[string]string{"create_directory": "allow", "delete_*": "deny", "read_file": "elicit"}
	h := &human{answer: accept(false)}
	c := kind(t, "inprocess-2026").open(t, f.server(t), client.WithElicitationHandler(h))

	list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	require.NotContains(t, toolNames(list.Tools), "delete_file", "a tool in deny mode is not offered")

	require.False(t, callTool(t, c, "create_directory", map[string]any{"path": "d"}).IsError)
	require.Empty(t, h.questions(), "allow runs without asking")
	require.DirExists(t, filepath.Join(f.ws, "d"))

	e := errorOf(t, callTool(t, c, "delete_file", map[string]any{"path": "hello.txt"}))
	require.Equal(t, toolerr.DeniedNotAllowed, e.Code)
	require.Equal(t, "approval.deny", e.Rule)
	require.Contains(t, e.Hint, "approval.modes")
	require.FileExists(t, filepath.Join(f.ws, "hello.txt"))
	require.Empty(t, h.questions())

	require.False(t, callTool(t, c, "read_file", map[string]any{"path": "hello.txt"}).IsError)
	q := h.questions()
	require.Len(t, q, 1, "elicit makes even a read ask")
	require.True(t, strings.HasPrefix(q[0].Params.Message, "Call read_file with arguments:\n{\n  \"path\": \"hello.txt\"\n}"), q[0].Params.Message)
}

func kind(t *testing.T, name string) clientKind {
	for _, k := range clientKinds {
		if k.name == name {
			return k
		}
	}
	t.Fatalf("no client kind %s", name)
	return clientKind{}
}

// TestApprovalPreviewRefusesFailingCalls: a call the preview shows would
// fail is refused with the tool's own error, without bothering the human.
func TestApprovalPreviewRefusesFailingCalls(t *testing.T) {
	f := newFixture(t)
	withApproval(f, time.Minute)
	h := &human{answer: accept(false)}
	c := kind(t, "inprocess-2025").open(t, f.server(t), client.WithElicitationHandler(h))
	e := errorOf(t, callTool(t, c, "edit_file", map[string]any{"path": "hello.txt",
		"edits": []any{map[string]any{"old_text": "not there", "new_text": "x"}}}))
	require.Equal(t, toolerr.EditNoMatch, e.Code)
	e = errorOf(t, callTool(t, c, "delete_file", map[string]any{"path": "missing.txt"}))
	require.Equal(t, toolerr.NotFound, e.Code)
	require.Empty(t, h.questions())
	require.Contains(t, auditTrail(t, f.auditPath), "edit_file:declined:approval.preview")
}

// TestApprovalShowsTheExactAction: edits show their diff, and what could
// disguise the action on the human's screen is escaped.
func TestApprovalShowsTheExactAction(t *testing.T) {
	f := newFixture(t)
	withApproval(f, time.Minute)
	h := &human{answer: answer(mcp.ElicitationResponseActionDecline)}
	c := kind(t, "inprocess-2026").open(t, f.server(t), client.WithElicitationHandler(h))

	callTool(t, c, "edit_file", map[string]any{"path": "src/main.go",
		"edits": []any{map[string]any{"old_text": "// TODO: more", "new_text": "// done"}}})
	hostile := "ok\x1b[2K\x1b[1A\rApprove: harmless read\u202e\u200b"
	callTool(t, c, "write_file", map[string]any{"path": "hello.txt", "content": hostile})
	callTool(t, c, "move_file", map[string]any{"source": "hello.txt", "destination": "docs/hello.txt"})

	q := h.questions()
	require.Len(t, q, 3)
	edit := q[0].Params.Message
	require.True(t, strings.HasPrefix(edit, "Edit file src/main.go (1 replacement(s))\n\n--- a/src/main.go\n+++ b/src/main.go\n"), edit)
	require.Contains(t, edit, "-func main() {} // TODO: more\n+func main() {} // done\n")
	write := q[1].Params.Message
	require.True(t, strings.HasPrefix(write, "Overwrite file hello.txt ("), write)
	require.NotContains(t, write, "\x1b")
	require.NotContains(t, write, "\u202e")
	require.NotContains(t, write, "\r")
	require.Contains(t, write, `ok\u{001B}[2K\u{001B}[1A\u{000D}Approve: harmless read\u{202E}\u{200B}`)
	require.True(t, strings.HasPrefix(q[2].Params.Message, "Move file (22 bytes) hello.txt to docs/hello.txt"), q[2].Params.Message)
	got, err := os.ReadFile(filepath.Join(f.ws, "src/main.go"))
	require.NoError(t, err)
	require.Contains(t, string(got), "TODO: more", "previewing an edit writes nothing")
}

// TestApprovalOverSSE: the legacy SSE transport cannot send requests to
// the client, so a call that needs approval fails closed there.
func TestApprovalOverSSE(t *testing.T) {
	f := newFixture(t)
	withApproval(f, time.Minute)
	b := f.server(t)
	h, stop := b.HTTPHandler(mcpserver.HTTPOptions{Token: testToken, MaxBodyBytes: 1 << 20, MaxSessions: 10, IdleTimeout: time.Minute})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		stop(context.Background())
		srv.Close()
	})
	c, err := client.NewSSEMCPClient(srv.URL+"/sse", transport.WithHeaders(map[string]string{"Authorization": "Bearer " + testToken}))
	require.NoError(t, err)
	client.WithElicitationHandler(&human{answer: accept(false)})(c)
	start(t, c, legacyVersion)
	e := errorOf(t, callTool(t, c, "write_file", writeArgs("x")))
	require.Equal(t, toolerr.DeniedApprovalUnavailable, e.Code)
	require.Contains(t, e.Message, "this transport cannot send requests to the client")
	require.NoFileExists(t, filepath.Join(f.ws, "notes/todo.md"))
}

// TestApprovalRefusesToAskOverPartOfTheAction: an action too long to show
// whole (a huge script or file) is refused without asking, since a human
// approving a cut question would approve what they never saw; nothing runs.
func TestApprovalRefusesToAskOverPartOfTheAction(t *testing.T) {
	f := newFixture(t)
	withApproval(f, time.Minute)
	h := &human{answer: accept(false)}
	c := kind(t, "inprocess-2025").open(t, f.server(t), client.WithElicitationHandler(h))
	big := strings.Repeat("harmless line\n", (64<<10)/14) + "rm -rf the tail nobody reads\n" // over the 64 KiB a question shows
	e := errorOf(t, callTool(t, c, "write_file", map[string]any{"path": "big.txt", "content": big}))
	require.Equal(t, toolerr.LimitExceeded, e.Code)
	require.Equal(t, "approval.max_question_bytes", e.Rule)
	require.Empty(t, h.questions(), "the human is not asked over part of the action")
	require.NoFileExists(t, filepath.Join(f.ws, "big.txt"))

	require.False(t, callTool(t, c, "write_file", map[string]any{"path": "small.txt", "content": "short\n"}).IsError)
	require.Len(t, h.questions(), 1, "a short action is still asked")
}
