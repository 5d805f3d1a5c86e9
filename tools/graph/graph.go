// Package graph implements the Neo4j task-graph tools:
// missions, their tasks, the task hierarchy and dependencies, the agent a
// task is assigned to and the artifacts it produced.
//
// The model in Neo4j, with labels and relationship types fixed in code:
//
//	(:Mission {id, name, description, created_at})-[:HAS_TASK]->(:Task)
//	(:Task {id, description, status, created_at, updated_at})
//	(:Task)-[:HAS_CHILD]->(:Task)          each task has exactly one parent
//	(:Task)-[:DEPENDS_ON]->(:Task)         acyclic
//	(:Task)-[:ASSIGNED_TO]->(:Agent {id})  at most one
//	(:Task)-[:PRODUCES_ARTIFACT]->(:Artifact {id: "tasks/<task>/artifacts/<name>"})
//
// Every value reaches Cypher as a parameter. Arguments are validated before
// any query; the checks that depend on the graph (existence, cycles, one
// parent) run in the same write transaction as the change they guard.
package graph

import (
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
)

// Set is the graph toolset over one Runner.
type Set struct {
	db Runner
	// limit caps the IDs or tasks one list holds.
	limit int
}

// New returns the graph toolset; limit caps every list a tool returns.
// With a nil db the tools are only defined (the catalog lists them without
// connecting); Bind attaches the database before any call.
func New(db Runner, limit int) *Set {
	return &Set{db: db, limit: limit}
}

// Bind attaches the database the tools' handlers query. It is called once,
// before the server serves.
func (s *Set) Bind(db Runner) { s.db = db }

// Tools returns every graph tool, read-only ones first.
func (s *Set) Tools() []tools.Tool {
	return withPreviews([]tools.Tool{
		s.listMissions(), s.getMission(), s.getTask(), s.listChildTasks(), s.checkTaskDependencies(),
		s.createMission(), s.createTask(), s.updateTaskStatus(), s.addChildTask(), s.addTaskDependency(),
		s.assignAgentToTask(), s.linkArtifactToTask(),
	})
}

var readMeta = tools.Meta{Toolset: "graph", Capabilities: []string{"graph:read:*"}}

var writeMeta = tools.Meta{Toolset: "graph", Capabilities: []string{"graph:write:*"}, RequiresApproval: true}

// Annotations: the graph is toolwarden's own closed domain, so no tool is
// open-world.
var (
	readOnly = func(title string) tools.Annotations {
		return tools.Annotations{Title: title, ReadOnly: true, Idempotent: true}
	}
	additive = func(title string, idempotent bool) tools.Annotations {
		return tools.Annotations{Title: title, Idempotent: idempotent}
	}
	replacing = func(title string) tools.Annotations {
		return tools.Annotations{Title: title, Destructive: true, Idempotent: true}
	}
)

func notFound(arg, id, what string) error {
	return toolerr.New(toolerr.NotFound,
		"Check the ID: use the value a graph tool returned (list_missions, get_mission, get_task, list_child_tasks).",
		"%s %s: no %s has this ID", arg, id, what).WithRule("graph.exists")
}

// limitParams adds the list cap to params.
func (s *Set) limitParams(params map[string]any) map[string]any {
	params["limit"] = s.limit
	return params
}
