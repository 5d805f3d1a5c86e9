// Package toolsnaps snapshots tools' schemas and descriptions, so that any
// change to what a model sees shows up in review. Run the tests with
// UPDATE_TOOLSNAPS=true to accept a change.
package toolsnaps

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mark3labs/mcp-go/mcp"
)

// Dir is where snapshots live, relative to the test's package.
const Dir = "__toolsnaps__"

// Test compares tool's JSON with its snapshot, writing the snapshot when
// UPDATE_TOOLSNAPS=true or when none exists yet outside CI.
func Test(tool mcp.Tool) error {
	got, err := json.MarshalIndent(tool, "", "  ")
	if err != nil {
		return err
	}
	got = append(got, '\n')
	path := filepath.Join(Dir, tool.Name+".snap")
	want, err := os.ReadFile(path)
	update := os.Getenv("UPDATE_TOOLSNAPS") == "true"
	if os.IsNotExist(err) && os.Getenv("CI") == "" {
		update = true
	} else if err != nil && !update {
		return fmt.Errorf("snapshot %s: %w (run with UPDATE_TOOLSNAPS=true)", path, err)
	}
	if update {
		if err := os.MkdirAll(Dir, 0o755); err != nil {
			return err
		}
		return os.WriteFile(path, got, 0o644)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("tool %s differs from %s; review the change and run with UPDATE_TOOLSNAPS=true to accept it\n--- got\n%s", tool.Name, path, got)
	}
	return nil
}
