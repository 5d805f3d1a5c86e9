package graph

import (
	"context"
	"errors"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// schema is the constraints the tools rely on: IDs unique per label (which
// also indexes them), and the one lock node that serialises changes to the
// task hierarchy and dependencies (see lockEdges).
var schema = []string{
	"CREATE CONSTRAINT toolwarden_mission_id IF NOT EXISTS FOR (n:Mission) REQUIRE n.id IS UNIQUE",
	"CREATE CONSTRAINT toolwarden_task_id IF NOT EXISTS FOR (n:Task) REQUIRE n.id IS UNIQUE",
	"CREATE CONSTRAINT toolwarden_agent_id IF NOT EXISTS FOR (n:Agent) REQUIRE n.id IS UNIQUE",
	"CREATE CONSTRAINT toolwarden_artifact_id IF NOT EXISTS FOR (n:Artifact) REQUIRE n.id IS UNIQUE",
	"CREATE CONSTRAINT toolwarden_lock_name IF NOT EXISTS FOR (n:ToolwardenLock) REQUIRE n.name IS UNIQUE",
	"MERGE (:ToolwardenLock {name: 'task_edges'})",
}

// alreadyExists are the codes of a constraint that another process created
// between our IF NOT EXISTS check and our CREATE.
var alreadyExists = map[string]bool{
	"Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists": true,
	"Neo.ClientError.Schema.ConstraintAlreadyExists":           true,
	"Neo.ClientError.Schema.IndexAlreadyExists":                true,
}

// setupSchema creates the constraints idempotently. Schema changes cannot
// share a transaction with data writes, so each runs on its own.
func setupSchema(ctx context.Context, s *Store) error {
	for _, stmt := range schema {
		_, err := neo4j.ExecuteQuery(ctx, s.driver, stmt, nil, neo4j.EagerResultTransformer,
			neo4j.ExecuteQueryWithDatabase(s.database), neo4j.ExecuteQueryWithWritersRouting())
		var ne *neo4j.Neo4jError
		if err != nil && !(errors.As(err, &ne) && alreadyExists[ne.Code]) {
			return err
		}
	}
	return nil
}
