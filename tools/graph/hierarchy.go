package graph

import (
	"context"

	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
)

// lockEdgesCypher takes the one lock that serialises changes to the task
// hierarchy and to dependencies. A cycle check that reads the graph and the
// write it guards are only safe together if no other such write can
// commit in between; the lock node's uniqueness constraint makes MERGE
// safe under concurrency.
const lockEdgesCypher = `MERGE (l:ToolwardenLock {name: 'task_edges'}) SET l.held_at = datetime()`

func lockEdges(ctx context.Context, tx Tx) error {
	_, err := tx.Query(ctx, lockEdgesCypher, nil)
	return err
}

// AddChildIn is add_child_task's input.
type AddChildIn struct {
	ParentID string `json:"parent_id" jsonschema:"ID of the task that becomes the parent"`
	ChildID  string `json:"child_id" jsonschema:"ID of the task that becomes its child"`
}

// AddChildOut is add_child_task's output.
type AddChildOut struct {
	ParentID         string `json:"parent_id"`
	ChildID          string `json:"child_id"`
	PreviousParentID string `json:"previous_parent_id,omitempty" jsonschema:"The mission or task the child was under before"`
	Changed          bool   `json:"changed" jsonschema:"False when the child was already under this parent"`
}

const addChildTaskDesc = `Make one task a sub-task of another, moving it from its current parent.

When to use: to reorganise a mission's task tree, e.g. to group existing tasks under a new task. To create a new sub-task use create_task instead.

Parameters:
- parent_id (required): the task that becomes the parent, a canonical lower-case UUID.
- child_id (required): the task that becomes its child. Every task has exactly one parent, so the child leaves its current parent (a mission or a task).

Returns: parent_id, child_id, previous_parent_id, changed (false when it already was the parent's child; nothing is modified then).

Errors: invalid_argument.uuid for a malformed ID; not_found naming parent_id or child_id when no task has it; conflict.cycle when parent_id is child_id or one of its descendants; conflict when the two tasks belong to different missions; backend.unavailable when Neo4j cannot be reached.

Side effects: replaces the child's parent link. The check and the change happen in one transaction, serialised with other hierarchy and dependency changes.

Example: {"parent_id": "0b6d3c7e-8f52-4a1e-9a59-3c1f2a4b5d6e", "child_id": "7d444840-9dc0-11d1-b245-5ffdce74fad2"}`

const (
	childFactsCypher = `OPTIONAL MATCH (p:Task {id: $parent_id})
OPTIONAL MATCH (c:Task {id: $child_id})
RETURN p IS NOT NULL AS parent_found, c IS NOT NULL AS child_found,
  COLLECT { MATCH (x:Task)-[:HAS_CHILD]->(c) RETURN x.id UNION MATCH (x:Mission)-[:HAS_TASK]->(c) RETURN x.id } AS old_parent,
  EXISTS { MATCH (c)-[:HAS_CHILD*1..]->(p) } AS cycle,
  COLLECT { MATCH (p)<-[:HAS_CHILD*0..]-(:Task)<-[:HAS_TASK]-(m:Mission) RETURN m.id LIMIT 1 } AS parent_mission,
  COLLECT { MATCH (c)<-[:HAS_CHILD*0..]-(:Task)<-[:HAS_TASK]-(m:Mission) RETURN m.id LIMIT 1 } AS child_mission`
	unlinkParentCypher = `MATCH (c:Task {id: $child_id})
OPTIONAL MATCH (x:Task)-[r:HAS_CHILD]->(c)
DELETE r
WITH DISTINCT c
OPTIONAL MATCH (:Mission)-[r:HAS_TASK]->(c)
DELETE r`
	linkChildCypher = `MATCH (p:Task {id: $parent_id}), (c:Task {id: $child_id})
MERGE (p)-[:HAS_CHILD]->(c)`
)

// childFacts is what add_child_task reads before it decides.
type childFacts struct {
	parentFound, childFound, cycle bool
	oldParent                      string
	parentMission, childMission    string
}

func (s *Set) addChildTask() tools.Tool {
	return tools.New("add_child_task", addChildTaskDesc, replacing("Add child task"), writeMeta,
		func(ctx context.Context, in AddChildIn) (AddChildOut, error) {
			if err := checkPair("parent_id", in.ParentID, "child_id", in.ChildID); err != nil {
				return AddChildOut{}, err
			}
			params := map[string]any{"parent_id": in.ParentID, "child_id": in.ChildID}
			return write(ctx, s.db, func(ctx context.Context, tx Tx) (AddChildOut, error) {
				if err := lockEdges(ctx, tx); err != nil {
					return AddChildOut{}, err
				}
				r, _, err := single(ctx, tx, childFactsCypher, params)
				if err != nil {
					return AddChildOut{}, err
				}
				f := childFacts{parentFound: r.boolean("parent_found"), childFound: r.boolean("child_found"),
					cycle: r.boolean("cycle"), oldParent: first(r.strs("old_parent")),
					parentMission: first(r.strs("parent_mission")), childMission: first(r.strs("child_mission"))}
				out := AddChildOut{ParentID: in.ParentID, ChildID: in.ChildID, PreviousParentID: f.oldParent}
				if changed, err := f.decide(in); err != nil || !changed {
					return out, err
				}
				for _, q := range []string{unlinkParentCypher, linkChildCypher} {
					if _, err := tx.Query(ctx, q, params); err != nil {
						return AddChildOut{}, err
					}
				}
				out.Changed = true
				return out, nil
			})
		})
}

// decide says whether the move may and must happen.
func (f childFacts) decide(in AddChildIn) (bool, error) {
	switch {
	case !f.parentFound:
		return false, notFound("parent_id", in.ParentID, "task")
	case !f.childFound:
		return false, notFound("child_id", in.ChildID, "task")
	case f.cycle:
		return false, toolerr.New(toolerr.Cycle, "A task cannot be moved under one of its own sub-tasks; choose another parent.",
			"parent_id %s is a descendant of child_id %s", in.ParentID, in.ChildID).WithRule("graph.acyclic")
	case f.oldParent == in.ParentID:
		return false, nil
	case f.parentMission != "" && f.childMission != "" && f.parentMission != f.childMission:
		return false, toolerr.New(toolerr.Conflict, "Tasks move only within their mission; create a new task in the other mission instead.",
			"parent_id belongs to mission %s and child_id to mission %s", f.parentMission, f.childMission).WithRule("graph.same_mission")
	}
	return true, nil
}

// checkPair validates two task IDs that must differ.
func checkPair(argA, a, argB, b string) error {
	if err := checkID(argA, a); err != nil {
		return err
	}
	if err := checkID(argB, b); err != nil {
		return err
	}
	if a == b {
		return toolerr.New(toolerr.Cycle, "Name two different tasks.",
			"%s and %s are the same task; a task cannot be linked to itself", argA, argB).WithRule("graph.acyclic")
	}
	return nil
}
