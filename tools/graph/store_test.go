package graph_test

import (
	"context"
	"os"
	"testing"

	"github.com/google/uuid"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools/graph"
)

// serviceConfig is the graph config of the service environment.
func serviceConfig(t *testing.T) configs.Graph {
	t.Helper()
	testenv.Need(t, "TOOLWARDEN_GRAPH_URI")
	t.Chdir(t.TempDir())
	l, err := configs.Load(configs.Options{})
	require.NoError(t, err)
	return l.Config.Graph
}

// TestReadSessionsRefuseWrites: the read tools' transactions run in read
// mode, which Neo4j itself enforces, so a read tool could not write even if
// its Cypher tried to.
func TestReadSessionsRefuseWrites(t *testing.T) {
	s, err := graph.Open(context.Background(), serviceConfig(t))
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Read(context.Background(), func(ctx context.Context, tx graph.Tx) (any, error) {
		return tx.Query(ctx, "CREATE (:Task {id: $id})", map[string]any{"id": uuid.NewString()})
	})
	require.Error(t, err)
	require.NotEqual(t, toolerr.BackendUnavailable, toolerr.CodeOf(err), "a refused write is no outage")
}

// TestSeparateReadCredentials: with graph.read_username set, reads log in
// as that user and writes as graph.username.
func TestSeparateReadCredentials(t *testing.T) {
	cfg := serviceConfig(t)
	admin, err := graph.Open(context.Background(), cfg)
	require.NoError(t, err)
	defer admin.Close()
	reader, password := "toolwarden_test_reader", uuid.NewString()
	driver, err := neo4j.NewDriverWithContext(cfg.URI, neo4j.BasicAuth(cfg.Username, os.Getenv(cfg.PasswordEnv), ""))
	require.NoError(t, err)
	defer driver.Close(context.Background())
	_, err = neo4j.ExecuteQuery(context.Background(), driver,
		"CREATE OR REPLACE USER toolwarden_test_reader SET PLAINTEXT PASSWORD $pw CHANGE NOT REQUIRED",
		map[string]any{"pw": password}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase("system"))
	require.NoError(t, err)

	t.Setenv("TOOLWARDEN_TEST_READER_PASSWORD", password)
	cfg.ReadUsername, cfg.ReadPasswordEnv = reader, "TOOLWARDEN_TEST_READER_PASSWORD"
	s, err := graph.Open(context.Background(), cfg)
	require.NoError(t, err)
	defer s.Close()
	user, err := s.Read(context.Background(), func(ctx context.Context, tx graph.Tx) (any, error) {
		recs, err := tx.Query(ctx, "SHOW CURRENT USER YIELD user", nil)
		if err != nil || len(recs) == 0 {
			return nil, err
		}
		return recs[0]["user"], nil
	})
	require.NoError(t, err)
	require.Equal(t, reader, user)

	t.Setenv("TOOLWARDEN_TEST_READER_PASSWORD", "wrong-"+password)
	_, err = graph.Open(context.Background(), cfg)
	require.ErrorContains(t, err, "graph.read_username", "refused read credentials make the toolset unavailable")
}
