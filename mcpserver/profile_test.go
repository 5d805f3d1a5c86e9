//go:build !conformance

package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/toolwarden/toolwarden/mcpserver"
)

// A normal build's catalog holds none of the conformance suite's fixture
// tools: only a build with the conformance tag (e2e's TestConformance)
// adds them.
func TestCatalogHasNoConformanceFixtures(t *testing.T) {
	for _, tool := range mcpserver.Catalog(newFixture(t).cfg) {
		assert.NotEqual(t, "conformance", tool.Meta.Toolset, tool.Tool.Name)
		assert.False(t, strings.HasPrefix(tool.Tool.Name, "test_"), tool.Tool.Name)
	}
}
