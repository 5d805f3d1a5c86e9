package mcpserver

import (
	"context"
	"errors"
	"io"

	"github.com/toolwarden/toolwarden/tools/graph"
)

// openGraph connects to the configured Neo4j and binds it to the graph
// tools. Without graph.uri, or when Neo4j cannot be reached or refuses the
// credentials, the graph toolset is unavailable and the reason is reported.
func openGraph(ctx context.Context, env backendEnv, set *graph.Set) (io.Closer, error) {
	cfg := env.Config.Graph
	if cfg.URI == "" {
		return nil, errors.New("not configured: set graph.uri, graph.username and graph.password_env")
	}
	store, err := graph.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	set.Bind(store)
	return store, nil
}
