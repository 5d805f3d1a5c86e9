package guard

import (
	"errors"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// downStore is a shared usage store that cannot be reached.
type downStore struct{ outputFails bool }

var errDown = errors.New("dial tcp 127.0.0.1:6379: connection refused")

func (s downStore) Admit(Charge, func(State) Decision) (Decision, error) {
	if s.outputFails {
		return pass("limits.within"), nil
	}
	return Decision{}, errDown
}
func (downStore) ChargeOutput(string, []ToolLimits, int64) error { return errDown }
func (downStore) Peek(string, []ToolLimits) (State, error)       { return State{}, errDown }
func (downStore) Forget(string)                                  {}

// TestSharedStoreDownFailsClosed: when the replicas' shared usage cannot
// be read, no call runs; the denial names backend.unavailable and its
// audit line is written. A call whose output cannot be counted has its
// result withheld.
func TestSharedStoreDownFailsClosed(t *testing.T) {
	audit := &memAuditor{}
	g := New(Config{Policy: policyOf(t, []string{"*"}, nil, []string{"fs:read:**"}, nil), Usage: downStore{},
		Limits: Limits{MaxCalls: 10, MaxOutputBytes: 1 << 20}, MaxOutputBytes: 1 << 20},
		[]ToolInfo{*depthTools["read_file"]}, newTestValidator(t, "read_file"), audit)
	tk, denial := g.Admit(Call{Tool: "read_file", Session: "s", Identity: "alice", Args: map[string]any{"path": "a"}})
	require.Nil(t, tk, "the handler must never run")
	require.NotNil(t, denial)
	require.Equal(t, toolerr.BackendUnavailable, denial.Code)
	require.Equal(t, "cluster.redis", denial.Rule)
	require.Contains(t, denial.Hint, "cluster.redis_url")
	require.Contains(t, denial.Message, "connection refused")
	entries := audit.all()
	require.Len(t, entries, 1)
	require.Equal(t, Deny, entries[0].Outcome)
	require.Equal(t, string(toolerr.BackendUnavailable), entries[0].Code)
	require.Equal(t, "cluster.redis", g.Explain(Call{Tool: "read_file", Identity: "alice"}).Rule)

	g = New(Config{Policy: policyOf(t, []string{"*"}, nil, []string{"fs:read:**"}, nil), Usage: downStore{outputFails: true},
		Limits: Limits{MaxCalls: 10, MaxOutputBytes: 1 << 20}, MaxOutputBytes: 1 << 20},
		[]ToolInfo{*depthTools["read_file"]}, newTestValidator(t, "read_file"), &memAuditor{})
	tk, denial = g.Admit(Call{Tool: "read_file", Session: "s", Identity: "alice", Args: map[string]any{"path": "a"}})
	require.Nil(t, denial)
	res := tk.Finish(mcp.NewToolResultText("secret-free output"), nil)
	require.True(t, res.IsError)
	require.Equal(t, toolerr.BackendUnavailable, toolerr.ErrorCode(res))
}
