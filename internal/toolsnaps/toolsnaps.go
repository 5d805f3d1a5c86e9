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
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Dir is where snapshots live, relative to the test's package.
const Dir = "__toolsnaps__"

// ext ends every snapshot file's name.
const ext = ".snap"

// Updating reports whether the run accepts changes (UPDATE_TOOLSNAPS=true).
func Updating() bool { return os.Getenv("UPDATE_TOOLSNAPS") == "true" }

// inCI reports whether the run is CI's, where nothing is written and a
// missing snapshot is a failure.
func inCI() bool { return os.Getenv("CI") != "" }

// Test compares tool's JSON with its snapshot, writing the snapshot when
// UPDATE_TOOLSNAPS=true or when none exists yet outside CI.
func Test(tool mcp.Tool) error {
	got, err := json.MarshalIndent(tool, "", "  ")
	if err != nil {
		return err
	}
	got = append(got, '\n')
	path := filepath.Join(Dir, tool.Name+ext)
	want, err := os.ReadFile(path)
	update := Updating()
	if os.IsNotExist(err) && !inCI() {
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

// Orphans fails on every snapshot whose tool is not among names: a tool
// that is removed or renamed must not leave a snapshot that no test reads.
// With UPDATE_TOOLSNAPS=true it deletes them instead.
func Orphans(names []string) error {
	files, err := filepath.Glob(filepath.Join(Dir, "*"+ext))
	if err != nil {
		return err
	}
	var orphans []string
	for _, f := range files {
		if slices.Contains(names, strings.TrimSuffix(filepath.Base(f), ext)) {
			continue
		}
		if Updating() {
			if err := os.Remove(f); err != nil {
				return err
			}
			continue
		}
		orphans = append(orphans, f)
	}
	if len(orphans) > 0 {
		return fmt.Errorf("snapshots without a tool: %s; delete them or run with UPDATE_TOOLSNAPS=true", strings.Join(orphans, ", "))
	}
	return nil
}
