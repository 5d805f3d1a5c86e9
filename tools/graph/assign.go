package graph

import (
	"context"

	"github.com/toolwarden/toolwarden/tools"
)

// AssignIn is assign_agent_to_task's input.
type AssignIn struct {
	TaskID  string `json:"task_id" jsonschema:"The task's ID (a canonical lower-case UUID)"`
	AgentID string `json:"agent_id" jsonschema:"The agent's ID: 1-64 letters, digits, '.', '_' or '-'"`
}

// AssignOut is assign_agent_to_task's output.
type AssignOut struct {
	TaskID          string `json:"task_id"`
	AgentID         string `json:"agent_id"`
	PreviousAgentID string `json:"previous_agent_id,omitempty" jsonschema:"The agent the task was assigned to before, if any"`
}

const assignAgentToTaskDesc = `Assign a task to an agent, replacing any previous assignment.

When to use: when an agent (you, or another worker) takes on a task, usually right after create_task or before setting it InProgress.

Parameters:
- task_id (required): the task's ID, a canonical lower-case UUID.
- agent_id (required): the agent's ID, 1-64 characters: letters, digits, ".", "_" or "-", starting with a letter or digit. An agent seen for the first time is recorded.

Returns: task_id, agent_id, previous_agent_id (absent when the task was unassigned).

Errors: invalid_argument.uuid for a malformed task_id; invalid_argument for a malformed agent_id; not_found when no task has this ID; backend.unavailable when Neo4j cannot be reached.

Side effects: a task has at most one agent: the previous assignment is removed. Creates the :Agent node when it is new.

Example: {"task_id": "7d444840-9dc0-11d1-b245-5ffdce74fad2", "agent_id": "coder-1"}`

// assignCypher locks the task first (SET updated_at) so that concurrent
// assignments are serialised and the task never ends with two agents.
const assignCypher = `MATCH (t:Task {id: $task_id})
SET t.updated_at = datetime()
WITH t
OPTIONAL MATCH (t)-[r:ASSIGNED_TO]->(old:Agent)
WITH t, collect(old.id) AS previous, collect(r) AS rels
FOREACH (x IN rels | DELETE x)
MERGE (a:Agent {id: $agent_id})
MERGE (t)-[:ASSIGNED_TO]->(a)
RETURN previous`

func (s *Set) assignAgentToTask() tools.Tool {
	return tools.New("assign_agent_to_task", assignAgentToTaskDesc, replacing("Assign agent to task"), writeMeta,
		func(ctx context.Context, in AssignIn) (AssignOut, error) {
			if err := checkID("task_id", in.TaskID); err != nil {
				return AssignOut{}, err
			}
			if err := checkAgentID(in.AgentID); err != nil {
				return AssignOut{}, err
			}
			params := map[string]any{"task_id": in.TaskID, "agent_id": in.AgentID}
			return write(ctx, s.db, func(ctx context.Context, tx Tx) (AssignOut, error) {
				r, ok, err := single(ctx, tx, assignCypher, params)
				if err != nil || !ok {
					return AssignOut{}, orNotFound(err, "task_id", in.TaskID, "task")
				}
				return AssignOut{TaskID: in.TaskID, AgentID: in.AgentID, PreviousAgentID: first(r.strs("previous"))}, nil
			})
		})
}

// LinkArtifactIn is link_artifact_to_task's input.
type LinkArtifactIn struct {
	TaskID      string `json:"task_id" jsonschema:"The task that produced the artifact"`
	ArtifactKey string `json:"artifact_key" jsonschema:"The artifact's storage key, tasks/<task_id>/artifacts/<name>"`
}

// LinkArtifactOut is link_artifact_to_task's output.
type LinkArtifactOut struct {
	TaskID      string `json:"task_id"`
	ArtifactKey string `json:"artifact_key"`
	Created     bool   `json:"created" jsonschema:"False when the link already existed"`
}

const linkArtifactToTaskDesc = `Record that a task produced an artifact, so that get_task lists its key.

When to use: after store_artifact saved a file for the task; pass the key it returned.

Parameters:
- task_id (required): the task's ID, a canonical lower-case UUID.
- artifact_key (required): the storage key exactly as the artifact tools return it, tasks/<task_id>/artifacts/<name>, for this same task_id. The name uses letters, digits and . _ - + = , @ ~ ( ), does not start with "." or "-" and holds no "..". The object itself is not checked.

Returns: task_id, artifact_key, created (false when the link already existed, which is not an error).

Errors: invalid_argument.uuid for a malformed task_id; invalid_argument for a key of another form or of another task; not_found when no task has this ID; backend.unavailable when Neo4j cannot be reached.

Side effects: creates the :Artifact node when it is new and one PRODUCES_ARTIFACT relationship.

Example: {"task_id": "7d444840-9dc0-11d1-b245-5ffdce74fad2", "artifact_key": "tasks/7d444840-9dc0-11d1-b245-5ffdce74fad2/artifacts/report.md"}`

const linkArtifactCypher = `MATCH (t:Task {id: $task_id})
SET t.updated_at = datetime()
WITH t, EXISTS { MATCH (t)-[:PRODUCES_ARTIFACT]->(:Artifact {id: $key}) } AS existed
MERGE (a:Artifact {id: $key})
MERGE (t)-[:PRODUCES_ARTIFACT]->(a)
RETURN existed`

func (s *Set) linkArtifactToTask() tools.Tool {
	return tools.New("link_artifact_to_task", linkArtifactToTaskDesc, additive("Link artifact to task", true), writeMeta,
		func(ctx context.Context, in LinkArtifactIn) (LinkArtifactOut, error) {
			if err := checkID("task_id", in.TaskID); err != nil {
				return LinkArtifactOut{}, err
			}
			if err := checkArtifactKey(in.ArtifactKey, in.TaskID); err != nil {
				return LinkArtifactOut{}, err
			}
			params := map[string]any{"task_id": in.TaskID, "key": in.ArtifactKey}
			return write(ctx, s.db, func(ctx context.Context, tx Tx) (LinkArtifactOut, error) {
				r, ok, err := single(ctx, tx, linkArtifactCypher, params)
				if err != nil || !ok {
					return LinkArtifactOut{}, orNotFound(err, "task_id", in.TaskID, "task")
				}
				return LinkArtifactOut{TaskID: in.TaskID, ArtifactKey: in.ArtifactKey, Created: !r.boolean("existed")}, nil
			})
		})
}
