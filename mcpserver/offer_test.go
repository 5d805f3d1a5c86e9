package mcpserver_test

import (
	"context"
	"maps"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
)

// A client's tools/list tells the toolsets it offered tools of (the exec
// tools boot their sandboxes only then); a tool the policy hides, and the
// server's own listing (the surface digest, `toolwarden tools`), tell
// nothing.
func TestToolsListTellsWhatWasOffered(t *testing.T) {
	f := newFixture(t)
	f.cfg.Policy.Deny = append(f.cfg.Policy.Deny, "delete_file")
	b := f.server(t)
	var mu sync.Mutex
	told := map[string]int{}
	tell := func(name string) func() {
		return func() { mu.Lock(); defer mu.Unlock(); told[name]++ }
	}
	b.SetOffers(map[string]func(){"read_file": tell("read_file"), "delete_file": tell("delete_file")})
	toldNow := func() map[string]int { mu.Lock(); defer mu.Unlock(); return maps.Clone(told) }

	_, err := b.SurfaceDigest(context.Background())
	require.NoError(t, err)
	_, err = b.ListTools(context.Background())
	require.NoError(t, err)
	require.Empty(t, toldNow(), "the server's own listing offers nothing")

	c, err := client.NewInProcessClient(b.MCP())
	require.NoError(t, err)
	connect(t, c)
	require.Empty(t, toldNow(), "initialize offers nothing")
	_, err = c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	require.Equal(t, map[string]int{"read_file": 1}, toldNow(), "a listed tool is told, a hidden one is not")
}
