package guard

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// TestSetTools: a tool made known while the guard serves is admitted under
// the policy and validated against its own schema; setting a tool again
// replaces its schema; a schema that does not compile sets nothing; and
// calls admitted meanwhile on other goroutines see one definition or the
// other (run under -race).
func TestSetTools(t *testing.T) {
	g := newTestGuard(t, &memAuditor{}, roomyLimits)
	schema := func(props string) map[string]json.RawMessage {
		return map[string]json.RawMessage{"read_status": json.RawMessage(`{"type":"object","properties":{` + props + `},"additionalProperties":false}`)}
	}
	call := func(args string) *toolerr.Error {
		_, denial := g.Admit(Call{Tool: "read_status", Session: "s", Args: decodeJSON(t, args)})
		return denial
	}
	require.Equal(t, toolerr.DeniedNotAllowed, call(`{}`).Code, "unknown before")

	require.NoError(t, g.SetTools([]ToolInfo{{Name: "read_status"}}, schema(`"verbose":{"type":"boolean"}`)))
	require.True(t, g.Allowed("read_status"))
	require.Nil(t, call(`{"verbose":true}`))
	require.Equal(t, toolerr.InvalidSchema, call(`{"path":"x"}`).Code)

	var wg sync.WaitGroup
	var stop atomic.Bool
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			_, _ = g.Admit(Call{Tool: "read_status", Session: "r", Args: map[string]any{}})
		}
	}()
	require.NoError(t, g.SetTools([]ToolInfo{{Name: "read_status"}}, schema(`"path":{"type":"string"}`)))
	stop.Store(true)
	wg.Wait()
	require.Nil(t, call(`{"path":"x"}`), "the new schema")
	require.Equal(t, toolerr.InvalidSchema, call(`{"verbose":true}`).Code)

	err := g.SetTools([]ToolInfo{{Name: "read_other"}}, map[string]json.RawMessage{"read_other": json.RawMessage(`{"type":7}`)})
	require.Error(t, err)
	require.False(t, g.Allowed("read_other"))
}

// TestGrantLater: a capability granted after start lets a tool made known
// after start run as one granted at start would; capabilities.deny still
// revokes it, and a capability that does not parse grants nothing.
func TestGrantLater(t *testing.T) {
	policy, err := NewPolicy([]string{"up__*"}, nil)
	require.NoError(t, err)
	policy, err = policy.WithCapabilities(nil, []string{"mcp:call:up/wipe"})
	require.NoError(t, err)
	v := newTestValidator(t)
	g := New(Config{Policy: policy, Limits: roomyLimits, MaxOutputBytes: 1 << 20}, nil, v, &memAuditor{})
	schema := json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	tools := []ToolInfo{{Name: "up__status", Capabilities: []string{"mcp:call:up/status"}}, {Name: "up__wipe", Capabilities: []string{"mcp:call:up/wipe"}}}
	require.NoError(t, g.SetTools(tools, map[string]json.RawMessage{"up__status": schema, "up__wipe": schema}))
	admit := func(tool string) *toolerr.Error {
		_, denial := g.Admit(Call{Tool: tool, Session: "s", Args: map[string]any{}})
		return denial
	}
	require.Equal(t, "capabilities.missing", admit("up__status").Rule, "not granted before")
	require.Error(t, g.GrantLater([]string{"not a capability"}))
	require.NoError(t, g.GrantLater([]string{"mcp:call:up/status", "mcp:call:up/wipe"}))
	require.Nil(t, admit("up__status"))
	require.Equal(t, `capabilities.deny:"mcp:call:up/wipe"`, admit("up__wipe").Rule, "deny still wins")
	g.RevokeLater([]string{"up__status", "up__unknown"})
	require.Equal(t, "capabilities.missing", admit("up__status").Rule, "no longer read-only: the default is withdrawn")
}
