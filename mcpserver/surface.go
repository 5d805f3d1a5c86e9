package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// SurfaceDigest is the SHA-256 of the tool surface the model is offered:
// the tools/list result (names, descriptions, input and output schemas,
// annotations), sorted by name, as JSON. Descriptions are fixed when the
// server is built, so the digest names exactly what every client sees.
func (s *Server) SurfaceDigest(ctx context.Context) (string, error) {
	list, err := s.ListTools(ctx)
	if err != nil {
		return "", err
	}
	return ToolsDigest(list)
}

// ToolsDigest is the SHA-256 of tools, sorted by name, as JSON.
func ToolsDigest(tools []mcp.Tool) (string, error) {
	sorted := slices.Clone(tools)
	slices.SortFunc(sorted, func(a, b mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	b, err := json.Marshal(sorted)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
