package mcpserver_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/mcpserver"
)

// sharedFixture points f at the shared state in r, under a key of its own.
func sharedFixture(t *testing.T, r *testenv.Redis) *fixture {
	f := newFixture(t)
	withApproval(f, time.Minute)
	t.Setenv("TW_TEST_REDIS_PASSWORD", r.Password)
	t.Setenv("TW_TEST_CLUSTER_SECRET", strings.Repeat("s", configs.MinClusterSecretBytes))
	f.cfg.Cluster = configs.Cluster{RedisURL: r.URL, RedisPasswordEnv: "TW_TEST_REDIS_PASSWORD", SecretEnv: "TW_TEST_CLUSTER_SECRET"}
	return f
}

// replica builds another server over f's config, as a second process
// would, with an audit file of its own.
func replica(t *testing.T, f *fixture, name string) *mcpserver.Built {
	audit, err := audit.Open(filepath.Join(filepath.Dir(f.auditPath), name+".jsonl"))
	require.NoError(t, err)
	t.Cleanup(func() { audit.Close() })
	b, err := mcpserver.Build(context.Background(), f.cfg, audit, "test", slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b
}

// TestApprovalAnswerLandsOnAnotherReplica: with shared state, the
// 2026-07-28 retry that brings the human's answer may reach any replica,
// runs there once, and a replay on a third is asked again.
func TestApprovalAnswerLandsOnAnotherReplica(t *testing.T) {
	f := sharedFixture(t, testenv.StartRedis(t))
	a, b, c := replica(t, f, "a"), replica(t, f, "b"), replica(t, f, "c")
	args := writeArgs("from replica a to b")
	asked := modernCall(t, a, "write_file", args, mcp.MultiRoundTripParams{})
	require.True(t, asked.NeedsInput())
	done := modernCall(t, b, "write_file", args, mcp.MultiRoundTripParams{RequestState: asked.RequestState, InputResponses: accepted()})
	require.False(t, done.IsError, "%v", done.Content)
	require.False(t, done.NeedsInput())
	require.FileExists(t, filepath.Join(f.ws, "notes/todo.md"))
	replayed := modernCall(t, c, "write_file", args, mcp.MultiRoundTripParams{RequestState: asked.RequestState, InputResponses: accepted()})
	require.True(t, replayed.NeedsInput(), "an answer runs one call, fleet-wide")
}

// TestAloneAnswerStaysOnItsProcess: without cluster.redis_url each
// process signs with a key of its own, so another cannot honour its state.
func TestAloneAnswerStaysOnItsProcess(t *testing.T) {
	f := newFixture(t)
	withApproval(f, time.Minute)
	a, b := replica(t, f, "a"), replica(t, f, "b")
	asked := modernCall(t, a, "write_file", writeArgs("x"), mcp.MultiRoundTripParams{})
	require.True(t, asked.NeedsInput())
	again := modernCall(t, b, "write_file", writeArgs("x"), mcp.MultiRoundTripParams{RequestState: asked.RequestState, InputResponses: accepted()})
	require.True(t, again.NeedsInput())
}

// TestSharedStateStartErrors: a replica does not start without the key
// that signs approval state, and the error names the key to set; Redis
// being down does not stop the start, calls are refused until it is back.
func TestSharedStateStartErrors(t *testing.T) {
	r := testenv.StartRedis(t)
	f := sharedFixture(t, r)
	t.Setenv("TW_TEST_CLUSTER_SECRET", "")
	audit, err := audit.Open(f.auditPath)
	require.NoError(t, err)
	defer audit.Close()
	_, err = mcpserver.Build(context.Background(), f.cfg, audit, "test", slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.ErrorContains(t, err, "cluster.secret_env: the variable TW_TEST_CLUSTER_SECRET is empty or unset")

	t.Setenv("TW_TEST_CLUSTER_SECRET", strings.Repeat("s", configs.MinClusterSecretBytes))
	r.Stop()
	b := replica(t, f, "down")
	res := modernCall(t, b, "read_file", map[string]any{"path": "hello.txt"}, mcp.MultiRoundTripParams{})
	require.True(t, res.IsError)
	require.Equal(t, toolerr.BackendUnavailable, toolerr.ErrorCode(res))
	r.Start(t)
	require.Eventually(t, func() bool {
		return !modernCall(t, b, "read_file", map[string]any{"path": "hello.txt"}, mcp.MultiRoundTripParams{}).IsError
	}, 10*time.Second, 100*time.Millisecond)
}
