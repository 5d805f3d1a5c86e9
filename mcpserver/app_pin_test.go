package mcpserver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
)

// TestPinWithoutUpstreamsWritesNothing: an empty pins file would switch
// upstream_pins to block for every upstream added later; pin refuses.
func TestPinWithoutUpstreamsWritesNothing(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "toolwarden.pins.json")
	var w bytes.Buffer
	err := Pin(context.Background(), &configs.Loaded{}, out, &w)
	require.ErrorContains(t, err, "no upstreams in the config")
	_, statErr := os.Stat(out)
	require.ErrorIs(t, statErr, os.ErrNotExist)
	require.Empty(t, w.String())
}
