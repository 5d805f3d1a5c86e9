package graph

import (
	"context"

	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
)

// AddDependencyIn is add_task_dependency's input.
type AddDependencyIn struct {
	TaskID      string `json:"task_id" jsonschema:"ID of the task that must wait"`
	DependsOnID string `json:"depends_on_id" jsonschema:"ID of the task it waits for"`
}

// AddDependencyOut is add_task_dependency's output.
type AddDependencyOut struct {
	TaskID      string `json:"task_id"`
	DependsOnID string `json:"depends_on_id"`
	Created     bool   `json:"created" jsonschema:"False when the dependency already existed"`
}

const addTaskDependencyDesc = `Record that a task depends on another: task_id cannot be done before depends_on_id is Completed.

When to use: to order tasks, e.g. "deploy" depends on "run tests". check_task_dependencies then tells whether a task may start.

Parameters:
- task_id (required): the task that must wait, a canonical lower-case UUID.
- depends_on_id (required): the task it waits for. The tasks may belong to different missions.

Returns: task_id, depends_on_id, created (false when the dependency already existed, which is not an error).

Errors: invalid_argument.uuid for a malformed ID; not_found naming task_id or depends_on_id when no task has it; conflict.cycle when the two IDs are equal or depends_on_id already depends, directly or not, on task_id; backend.unavailable when Neo4j cannot be reached.

Side effects: adds one DEPENDS_ON relationship. The cycle check and the change happen in one transaction, serialised with other hierarchy and dependency changes, so concurrent calls cannot build a cycle together.

Example: {"task_id": "7d444840-9dc0-11d1-b245-5ffdce74fad2", "depends_on_id": "0b6d3c7e-8f52-4a1e-9a59-3c1f2a4b5d6e"}`

const (
	dependencyFactsCypher = `OPTIONAL MATCH (t:Task {id: $task_id})
OPTIONAL MATCH (d:Task {id: $depends_on_id})
RETURN t IS NOT NULL AS task_found, d IS NOT NULL AS dep_found,
  EXISTS { MATCH (t)-[:DEPENDS_ON]->(d) } AS exists`
	// The path search is a breadth-first shortestPath: on a dense DAG a
	// plain variable-length match could enumerate exponentially many paths.
	dependencyCycleCypher = `MATCH (t:Task {id: $task_id}), (d:Task {id: $depends_on_id})
RETURN EXISTS { MATCH p = shortestPath((d)-[:DEPENDS_ON*1..]->(t)) } AS cycle`
	addDependencyCypher = `MATCH (t:Task {id: $task_id}), (d:Task {id: $depends_on_id})
MERGE (t)-[:DEPENDS_ON]->(d)`
)

func (s *Set) addTaskDependency() tools.Tool {
	return tools.New("add_task_dependency", addTaskDependencyDesc, additive("Add task dependency", true), writeMeta,
		func(ctx context.Context, in AddDependencyIn) (AddDependencyOut, error) {
			if err := checkPair("task_id", in.TaskID, "depends_on_id", in.DependsOnID); err != nil {
				return AddDependencyOut{}, err
			}
			params := map[string]any{"task_id": in.TaskID, "depends_on_id": in.DependsOnID}
			return write(ctx, s.db, func(ctx context.Context, tx Tx) (AddDependencyOut, error) {
				out := AddDependencyOut{TaskID: in.TaskID, DependsOnID: in.DependsOnID}
				if err := lockEdges(ctx, tx); err != nil {
					return out, err
				}
				r, _, err := single(ctx, tx, dependencyFactsCypher, params)
				switch {
				case err != nil:
					return out, err
				case !r.boolean("task_found"):
					return out, notFound("task_id", in.TaskID, "task")
				case !r.boolean("dep_found"):
					return out, notFound("depends_on_id", in.DependsOnID, "task")
				case r.boolean("exists"):
					return out, nil
				}
				if r, _, err = single(ctx, tx, dependencyCycleCypher, params); err != nil {
					return out, err
				}
				if r.boolean("cycle") {
					return out, toolerr.New(toolerr.Cycle, "Remove the reverse ordering first or choose another task; dependencies must not form a loop.",
						"depends_on_id %s already depends, directly or through other tasks, on task_id %s", in.DependsOnID, in.TaskID).
						WithRule("graph.acyclic")
				}
				if _, err := tx.Query(ctx, addDependencyCypher, params); err != nil {
					return out, err
				}
				out.Created = true
				return out, nil
			})
		})
}

// CheckDependenciesOut is check_task_dependencies' output.
type CheckDependenciesOut struct {
	TaskID       string        `json:"task_id"`
	AllSatisfied bool          `json:"all_satisfied" jsonschema:"True when every task this one depends on is Completed (or there are none)"`
	Pending      []TaskSummary `json:"pending" jsonschema:"The dependencies that are not Completed yet"`
	PendingCount int           `json:"pending_count"`
	Total        int           `json:"total" jsonschema:"Number of direct dependencies"`
}

const checkTaskDependenciesDesc = `Check whether a task may start: are all the tasks it directly depends on Completed?

When to use: before setting a task InProgress, and to find what blocks it.

Parameters:
- task_id (required): the task's ID, a canonical lower-case UUID.

Returns: task_id, all_satisfied (true when every direct dependency is Completed, or there is none), pending (the dependencies that are not Completed: id, description, status; at most graph.max_list_results), pending_count, total.

Errors: invalid_argument.uuid for a malformed ID; not_found when no task has this ID; backend.unavailable when Neo4j cannot be reached.

Side effects: none (read-only).

Example: {"task_id": "7d444840-9dc0-11d1-b245-5ffdce74fad2"}`

const checkDependenciesCypher = `MATCH (t:Task {id: $id})
OPTIONAL MATCH (t)-[:DEPENDS_ON]->(d:Task)
WITH t, d ORDER BY d.created_at, d.id
WITH t, count(d) AS total,
  [x IN collect(d) WHERE x.status <> $completed | {id: x.id, description: x.description, status: x.status}] AS pending
RETURN total, size(pending) AS pending_count, pending[..$limit] AS pending`

func (s *Set) checkTaskDependencies() tools.Tool {
	return tools.New("check_task_dependencies", checkTaskDependenciesDesc, readOnly("Check task dependencies"), readMeta,
		func(ctx context.Context, in TaskIn) (CheckDependenciesOut, error) {
			if err := checkID("task_id", in.TaskID); err != nil {
				return CheckDependenciesOut{}, err
			}
			params := s.limitParams(map[string]any{"id": in.TaskID, "completed": string(Completed)})
			return read(ctx, s.db, func(ctx context.Context, tx Tx) (CheckDependenciesOut, error) {
				r, ok, err := single(ctx, tx, checkDependenciesCypher, params)
				if err != nil || !ok {
					return CheckDependenciesOut{}, orNotFound(err, "task_id", in.TaskID, "task")
				}
				out := CheckDependenciesOut{TaskID: in.TaskID, Total: r.integer("total"), PendingCount: r.integer("pending_count"),
					Pending: pendingList(r["pending"])}
				out.AllSatisfied = out.PendingCount == 0
				return out, nil
			})
		})
}

// pendingList reads a list of {id, description, status} maps.
func pendingList(v any) []TaskSummary {
	list, _ := v.([]any)
	out := make([]TaskSummary, 0, len(list))
	for _, item := range list {
		m, _ := item.(map[string]any)
		r := Record(m)
		out = append(out, TaskSummary{ID: r.str("id"), Description: r.str("description"), Status: Status(r.str("status"))})
	}
	return out
}
