package mcpserver_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
)

// TestResourceListIsAGuardedCall: resources/list shows what list_artifacts
// would, so it passes the same guard as a call of it: trust, capability
// denials, approval modes and limits apply, and it is audited.
func TestResourceListIsAGuardedCall(t *testing.T) {
	f, _ := artifactFixture(t)
	task := uuid.NewString()
	seed := inProcess(t, f.server(t))
	require.False(t, callTool(t, seed, "store_artifact", map[string]any{"task_id": task, "name": "plan.md", "content": "x", "encoding": "text"}).IsError)

	list := func(t *testing.T, change func(f *fixture)) []mcp.Resource {
		g, _ := artifactFixture(t)
		g.cfg.Artifacts = f.cfg.Artifacts
		change(g)
		c := inProcess(t, g.server(t))
		res, err := c.ListResources(ctxT(t), mcp.ListResourcesRequest{})
		require.NoError(t, err)
		return res.Resources
	}
	require.NotEmpty(t, list(t, func(*fixture) {}), "listed when a model may call list_artifacts")
	for name, change := range map[string]func(f *fixture){
		"requires trust":    func(f *fixture) { f.cfg.Policy.RequireTrust = []string{"list_artifacts"} },
		"capability denied": func(f *fixture) { f.cfg.Capabilities.Deny = []string{"s3:read:tasks/*"} },
		"approval asked": func(f *fixture) {
			f.cfg.Approval.Modes = map[string]string{"list_artifacts": "elicit", "retrieve_artifact": "allow"}
		},
	} {
		t.Run(name, func(t *testing.T) {
			require.Empty(t, list(t, change))
		})
	}
	t.Run("audited and counted", func(t *testing.T) {
		g, _ := artifactFixture(t)
		g.cfg.Artifacts = f.cfg.Artifacts
		g.cfg.Limits.MaxCallsPerSession = 1
		c := inProcess(t, g.server(t))
		res, err := c.ListResources(ctxT(t), mcp.ListResourcesRequest{})
		require.NoError(t, err)
		require.NotEmpty(t, res.Resources)
		require.Contains(t, auditTrail(t, g.auditPath), "list_artifacts:completed:allowed")
		res, err = c.ListResources(ctxT(t), mcp.ListResourcesRequest{})
		require.NoError(t, err)
		require.Empty(t, res.Resources, "the listing used the session's one call")
	})
}
