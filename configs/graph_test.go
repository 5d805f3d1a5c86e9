package configs

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestGraphDefaultsLeaveItUnconfigured(t *testing.T) {
	isolate(t)
	l, err := Load(Options{})
	require.NoError(t, err)
	g := l.Config.Graph
	require.Empty(t, g.URI)
	require.Equal(t, "neo4j", g.Database)
	require.Equal(t, 10*time.Second, g.QueryTimeout)
	require.Equal(t, 500, g.MaxListResults)
	for _, name := range []string{"create_task", "get_task", "list_missions"} {
		require.NotContains(t, l.Config.Policy.Allow, name, "graph tools stay hidden by default")
	}
}

func TestGraphFromEnvironment(t *testing.T) {
	isolate(t)
	t.Setenv("TOOLWARDEN_GRAPH_URI", "bolt://127.0.0.1:17687")
	t.Setenv("TOOLWARDEN_GRAPH_USERNAME", "neo4j")
	t.Setenv("TOOLWARDEN_GRAPH_PASSWORD_ENV", "NEO4J_PASSWORD")
	t.Setenv("TOOLWARDEN_GRAPH_QUERY_TIMEOUT", "3s")
	l, err := Load(Options{})
	require.NoError(t, err)
	g := l.Config.Graph
	require.Equal(t, "bolt://127.0.0.1:17687", g.URI)
	require.Equal(t, "NEO4J_PASSWORD", g.PasswordEnv)
	require.Equal(t, 3*time.Second, g.QueryTimeout)
	require.Contains(t, l.Widenings, `graph.uri connects the graph toolset to bolt://127.0.0.1:17687 as "neo4j" (from env TOOLWARDEN_GRAPH_URI)`)
}

func TestGraphValidation(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"scheme", "uri: http://x:7474\n  password_env: P", `graph.uri: scheme "http" is not one of`},
		{"credentials in the URI", "uri: bolt://neo4j:hunter2@x:7687\n  password_env: P", "graph.uri: must not hold credentials"},
		{"path", "uri: bolt://x:7687/neo4j\n  password_env: P", "must have no path"},
		{"no host", "uri: 'bolt://:7687'\n  password_env: P", "names no host"},
		{"no password_env", "uri: bolt://x:7687", "graph.password_env: must name the environment variable"},
		{"a password as password_env", "uri: bolt://x:7687\n  password_env: 's3cr3t!pw'", "graph.password_env: must name"},
		{"no username", "uri: bolt://x:7687\n  password_env: P\n  username: ''", "graph.username: must be set"},
		{"read user without password", "uri: bolt://x:7687\n  password_env: P\n  read_username: r", "set together or not at all"},
		{"database", "database: 'no spaces'", `graph.database: "no spaces" is not a Neo4j database name`},
		{"timeout", "query_timeout: 0s", "graph.query_timeout: must be between"},
		{"list cap", "max_list_results: 0", "graph.max_list_results: must be greater than 0"},
		{"unknown key", "password: hunter2", "graph.password: unknown key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := isolate(t)
			file := filepath.Join(dir, "toolwarden.yaml")
			writeFile(t, file, "graph:\n  "+tc.yaml+"\n")
			_, err := Load(Options{File: file})
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			if !strings.HasPrefix(tc.name, "no ") { // a key the file does not set has no line
				require.True(t, strings.HasPrefix(err.Error(), file+":"), "the error names the file: %v", err)
			}
			require.NotContains(t, err.Error(), "s3cr3t!pw", "a misplaced password is not echoed")
		})
	}
}
