package mcpserver

import (
	"context"
	"errors"
	"io"

	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/artifacts"
)

// openArtifacts connects the artifact tools to their store. Missing
// configuration, missing credentials, rejected credentials or a missing
// bucket make the toolset unavailable; a store that merely cannot be
// reached yet does not: its tools answer backend.unavailable until it is
// back.
func openArtifacts(ctx context.Context, env backendEnv, s *artifacts.Store) (io.Closer, error) {
	if err := s.Connect(); err != nil {
		return nil, err
	}
	if err := s.Probe(ctx); err != nil {
		if !errors.Is(err, artifacts.ErrUnreachable) {
			s.Close()
			return nil, err
		}
		env.Log.Warn("artifact store not reachable at start; its tools answer backend.unavailable until it is", "reason", err.Error())
	}
	return artifactsBackend{s}, nil
}

// artifactsBackend is the closer of the artifacts toolset, and offers its
// resources.
type artifactsBackend struct{ *artifacts.Store }

// Resources returns the artifacts as MCP resources.
func (b artifactsBackend) Resources() tools.Resources { return b.Store.Resources() }
