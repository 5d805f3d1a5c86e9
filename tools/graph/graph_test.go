package graph

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

const (
	idA = "0b6d3c7e-8f52-4a1e-9a59-3c1f2a4b5d6e"
	idB = "7d444840-9dc0-11d1-b245-5ffdce74fad2"
)

func TestValidationRunsBeforeAnyQuery(t *testing.T) {
	cases := []struct {
		tool string
		args map[string]any
		code toolerr.Code
	}{
		{"get_task", map[string]any{"task_id": strings.ToUpper(idA)}, toolerr.InvalidUUID},
		{"get_task", map[string]any{"task_id": "{" + idA + "}"}, toolerr.InvalidUUID},
		{"get_mission", map[string]any{"mission_id": "urn:uuid:" + idA}, toolerr.InvalidUUID},
		{"list_child_tasks", map[string]any{"parent_id": strings.ReplaceAll(idA, "-", "")}, toolerr.InvalidUUID},
		{"check_task_dependencies", map[string]any{"task_id": ""}, toolerr.InvalidUUID},
		{"create_mission", map[string]any{"name": "", "description": ""}, toolerr.InvalidText},
		{"create_mission", map[string]any{"name": "ok", "description": strings.Repeat("a", MaxDescription+1)}, toolerr.InvalidText},
		{"create_task", map[string]any{"parent_id": idA, "description": "a\x1bb"}, toolerr.InvalidText},
		{"create_task", map[string]any{"parent_id": "x", "description": "ok"}, toolerr.InvalidUUID},
		{"update_task_status", map[string]any{"task_id": idA, "status": "Done"}, toolerr.InvalidEnum},
		{"update_task_status", map[string]any{"task_id": idA, "status": "pending"}, toolerr.InvalidEnum},
		{"add_child_task", map[string]any{"parent_id": idA, "child_id": idA}, toolerr.Cycle},
		{"add_task_dependency", map[string]any{"task_id": idB, "depends_on_id": idB}, toolerr.Cycle},
		{"add_task_dependency", map[string]any{"task_id": idB, "depends_on_id": "nope"}, toolerr.InvalidUUID},
		{"assign_agent_to_task", map[string]any{"task_id": idA, "agent_id": "-leading-dash"}, toolerr.InvalidArgument},
		{"assign_agent_to_task", map[string]any{"task_id": idA, "agent_id": strings.Repeat("a", 65)}, toolerr.InvalidArgument},
		{"link_artifact_to_task", map[string]any{"task_id": idA, "artifact_key": "tasks/" + idB + "/artifacts/a"}, toolerr.InvalidArgument},
		{"get_task", map[string]any{"task_id": idA, "extra": 1}, toolerr.InvalidSchema},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s %v", tc.tool, tc.args), func(t *testing.T) {
			f := &fakeRunner{}
			code, text := invoke(New(f, 10), tc.tool, tc.args)
			require.Equal(t, tc.code, code, text)
			require.Empty(t, f.modes, "no transaction was opened")
			require.Empty(t, f.queries)
		})
	}
}

// marker is a value that must reach Neo4j only as a parameter.
const marker = "MARKER'}) DETACH DELETE n //"

func TestValuesReachCypherOnlyAsParameters(t *testing.T) {
	key := "tasks/" + idA + "/artifacts/report.md"
	cases := []struct {
		tool  string
		args  map[string]any
		value string // the argument value that must appear only in params
		mode  string
	}{
		{"create_mission", map[string]any{"name": marker, "description": marker}, marker, "write"},
		{"create_task", map[string]any{"parent_id": idA, "description": marker}, marker, "write"},
		{"get_task", map[string]any{"task_id": idA}, idA, "read"},
		{"get_mission", map[string]any{"mission_id": idA}, idA, "read"},
		{"list_child_tasks", map[string]any{"parent_id": idA}, idA, "read"},
		{"update_task_status", map[string]any{"task_id": idA, "status": "Completed"}, "Completed", "write"},
		{"add_child_task", map[string]any{"parent_id": idA, "child_id": idB}, idB, "write"},
		{"add_task_dependency", map[string]any{"task_id": idA, "depends_on_id": idB}, idB, "write"},
		{"check_task_dependencies", map[string]any{"task_id": idA}, idA, "read"},
		{"assign_agent_to_task", map[string]any{"task_id": idA, "agent_id": "coder-1"}, "coder-1", "write"},
		{"link_artifact_to_task", map[string]any{"task_id": idA, "artifact_key": key}, key, "write"},
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			f := &fakeRunner{}
			code, text := invoke(New(f, 10), tc.tool, tc.args)
			require.Empty(t, code, text)
			require.Equal(t, []string{tc.mode}, f.modes, "one transaction of the right kind")
			inParams := false
			for _, q := range f.queries {
				require.NotContains(t, q.cypher, tc.value, "values are never spliced into Cypher")
				for _, v := range q.params {
					inParams = inParams || v == tc.value
				}
			}
			require.True(t, inParams, "the value is passed as a parameter")
		})
	}
}

func TestReadToolsAreReadOnlyAndWriteToolsNeedApproval(t *testing.T) {
	for _, tool := range New(&fakeRunner{}, 10).Tools() {
		ro := *tool.Tool.Annotations.ReadOnlyHint
		require.Equal(t, !ro, tool.Meta.RequiresApproval, tool.Tool.Name)
		want := "graph:read:*"
		if !ro {
			want = "graph:write:*"
		}
		require.Equal(t, []string{want}, tool.Meta.Capabilities, tool.Tool.Name)
		require.False(t, *tool.Tool.Annotations.OpenWorldHint, tool.Tool.Name)
	}
}

func TestEmptyResultIsNotFound(t *testing.T) {
	none := func(string) ([]Record, error) { return nil, nil }
	for _, tc := range []struct {
		tool string
		args map[string]any
		arg  string
	}{
		{"get_task", map[string]any{"task_id": idA}, "task_id"},
		{"get_mission", map[string]any{"mission_id": idA}, "mission_id"},
		{"update_task_status", map[string]any{"task_id": idA, "status": "Failed"}, "task_id"},
		{"check_task_dependencies", map[string]any{"task_id": idA}, "task_id"},
		{"assign_agent_to_task", map[string]any{"task_id": idA, "agent_id": "a"}, "task_id"},
		{"link_artifact_to_task", map[string]any{"task_id": idA, "artifact_key": "tasks/" + idA + "/artifacts/a"}, "task_id"},
	} {
		code, text := invoke(New(&fakeRunner{respond: none}, 10), tc.tool, tc.args)
		require.Equal(t, toolerr.NotFound, code, tc.tool)
		require.Contains(t, text, tc.arg+" "+idA, tc.tool)
	}
}

func TestListsAreCapped(t *testing.T) {
	f := &fakeRunner{respond: func(cypher string) ([]Record, error) {
		if cypher == kindCypher {
			return []Record{{"mission": true}}, nil
		}
		recs := make([]Record, 4) // the tool asks for limit+1
		for i := range recs {
			recs[i] = Record{"id": uuid.NewString(), "description": "d", "status": "Pending"}
		}
		return recs, nil
	}}
	var out ListChildrenOut
	code, text := invoke(New(f, 3), "list_child_tasks", map[string]any{"parent_id": idA})
	require.Empty(t, code, text)
	require.NoError(t, decodeJSON(text, &out))
	require.Len(t, out.Tasks, 3)
	require.True(t, out.Truncated)
	require.Equal(t, listTopTasksCypher, f.queries[1].cypher, "a mission lists its top-level tasks")
	require.Equal(t, 4, f.queries[1].params["limit"])
}

func TestChildMoveDecision(t *testing.T) {
	in := AddChildIn{ParentID: idA, ChildID: idB}
	ok := childFacts{parentFound: true, childFound: true, oldParent: "m", parentMission: "m1", childMission: "m1"}
	cases := []struct {
		name    string
		change  func(*childFacts)
		changed bool
		code    toolerr.Code
	}{
		{"move", func(*childFacts) {}, true, ""},
		{"parent missing", func(f *childFacts) { f.parentFound = false }, false, toolerr.NotFound},
		{"child missing", func(f *childFacts) { f.childFound = false }, false, toolerr.NotFound},
		{"parent below child", func(f *childFacts) { f.cycle = true }, false, toolerr.Cycle},
		{"already there", func(f *childFacts) { f.oldParent = idA }, false, ""},
		{"other mission", func(f *childFacts) { f.childMission = "m2" }, false, toolerr.Conflict},
		{"no mission known", func(f *childFacts) { f.childMission = "" }, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := ok
			tc.change(&f)
			changed, err := f.decide(in)
			require.Equal(t, tc.changed, changed)
			require.Equal(t, tc.code, toolerr.CodeOf(err))
		})
	}
}

func TestMapError(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name string
		ctx  context.Context
		err  error
		code toolerr.Code
	}{
		{"tool error passes", context.Background(), notFound("task_id", idA, "task"), toolerr.NotFound},
		{"connection refused", context.Background(), &neo4j.ConnectivityError{Inner: errors.New("dial tcp: connection refused")}, toolerr.BackendUnavailable},
		{"retries exhausted", context.Background(), &neo4j.TransactionExecutionLimit{Cause: "timeout",
			Errors: []error{&neo4j.ConnectivityError{Inner: errors.New("eof")}}}, toolerr.BackendUnavailable},
		{"bad credentials", context.Background(), &neo4j.Neo4jError{Code: "Neo.ClientError.Security.Unauthorized"}, toolerr.BackendUnavailable},
		{"transient", context.Background(), &neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected"}, toolerr.BackendUnavailable},
		{"database down", context.Background(), &neo4j.Neo4jError{Code: "Neo.ClientError.Database.DatabaseNotFound"}, toolerr.BackendUnavailable},
		{"server timeout", context.Background(), &neo4j.Neo4jError{Code: "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration"}, toolerr.Timeout},
		{"unique clash", context.Background(), &neo4j.Neo4jError{Code: "Neo.ClientError.Schema.ConstraintValidationFailed"}, toolerr.Conflict},
		{"syntax error is ours", context.Background(), &neo4j.Neo4jError{Code: "Neo.ClientError.Statement.SyntaxError", Msg: "secret detail"}, toolerr.Internal},
		{"driver misuse is ours", context.Background(), &neo4j.UsageError{Message: "x"}, toolerr.Internal},
		{"deadline", context.Background(), fmt.Errorf("x: %w", context.DeadlineExceeded), toolerr.Timeout},
		{"cancelled call", canceled, errors.New("read: connection reset"), toolerr.Canceled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := toolerr.As(mapError(tc.ctx, tc.err))
			require.Equal(t, tc.code, e.Code)
			require.NotContains(t, e.JSON(), "secret detail", "server messages never reach the model")
			require.NotContains(t, e.JSON(), "dial tcp")
		})
	}
}

func TestStatusCounts(t *testing.T) {
	got := statusCounts([]any{[]any{"Pending", int64(2)}, []any{"Completed", int64(1)}, []any{nil, int64(0)}, []any{"Bogus", int64(9)}})
	require.Equal(t, StatusCounts{Pending: 2, Completed: 1}, got)
}
