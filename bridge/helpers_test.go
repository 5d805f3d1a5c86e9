package bridge_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/bridge"
	"github.com/toolwarden/toolwarden/configs"
	geminifake "github.com/toolwarden/toolwarden/internal/llmfake/gemini"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/mcpserver"
)

const testKey = "test-key-0123456789"

// toolwardenServer builds the real toolwarden server over a temporary
// workspace holding hello.txt and notes.md, with deny added to the policy.
func toolwardenServer(t testing.TB, deny ...string) *server.MCPServer {
	t.Helper()
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hello from toolwarden\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.md"), []byte("# Notes\nTODO: ship\n"), 0o644))
	for _, k := range []string{"TOOLWARDEN_CONFIG", "TOOLWARDEN_AUDIT_PATH", "TOOLWARDEN_POLICY_ALLOW", "TOOLWARDEN_WORKSPACE"} {
		t.Setenv(k, "")
	}
	t.Chdir(ws)
	l, err := configs.Load(configs.Options{})
	require.NoError(t, err)
	cfg := l.Config
	cfg.Workspace = ws
	cfg.Exec.Interpreters = nil
	cfg.Graph.URI = ""
	cfg.Artifacts.Endpoint = ""
	cfg.Policy.Deny = append(cfg.Policy.Deny, deny...)
	b, err := mcpserver.Build(context.Background(), cfg, audit.Discard{}, "test", quietLog())
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b.MCP()
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// waits records the backoff waits instead of sleeping.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(_ context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.d = append(w.d, d)
	return nil
}

// harness is a bridge between a fake Gemini and an MCP server.
type harness struct {
	b        *bridge.Bridge
	fake     *geminifake.Server
	activity *testenv.SyncBuffer
	prompts  *testenv.SyncBuffer // what the approver showed
	log      *testenv.SyncBuffer
	waits    *waits
}

type setup struct {
	srv      *server.MCPServer
	opts     bridge.Options
	approver *bridge.Approver
	attempts int
	timeout  time.Duration
}

func newHarness(t testing.TB, s setup, turns ...geminifake.Turn) *harness {
	t.Helper()
	if s.srv == nil {
		s.srv = toolwardenServer(t)
	}
	return newHarnessFor(t, bridge.Server{InProcess: s.srv}, s, turns...)
}

// newHarnessFor is newHarness for any MCP server.
func newHarnessFor(t testing.TB, srv bridge.Server, s setup, turns ...geminifake.Turn) *harness {
	t.Helper()
	h := &harness{fake: geminifake.New(turns...), activity: &testenv.SyncBuffer{}, prompts: &testenv.SyncBuffer{}, log: &testenv.SyncBuffer{}, waits: &waits{}}
	t.Cleanup(h.fake.Close)
	t.Cleanup(func() { require.Empty(t, h.fake.Problems()) })
	log := slog.New(slog.NewTextHandler(h.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if s.approver == nil {
		s.approver = &bridge.Approver{In: bridge.NewInput(strings.NewReader("")), Out: h.prompts, Log: log}
	}
	if s.approver.Out == nil {
		s.approver.Out = h.prompts
	}
	s.approver.Log = log
	ctx := context.Background()
	tb, err := bridge.Connect(ctx, srv, s.approver)
	require.NoError(t, err)
	t.Cleanup(func() { tb.Close() })
	if s.attempts == 0 {
		s.attempts = 4
	}
	if s.timeout == 0 {
		s.timeout = 10 * time.Second
	}
	m, err := bridge.NewGemini(ctx, bridge.GeminiConfig{
		APIKey: testKey, BaseURL: h.fake.URL, Model: "gemini-2.5-flash", Timeout: s.timeout,
		Retry: bridge.Retry{Attempts: s.attempts, Base: time.Second, Max: 30 * time.Second, Sleep: h.waits.sleep},
	})
	require.NoError(t, err)
	h.b, err = bridge.New(m, tb, s.opts, h.activity, log)
	require.NoError(t, err)
	return h
}
