package artifactkey

import (
	"strings"
	"testing"
)

// FuzzParse: whatever the input, an accepted key is exactly the key
// built from its parts, stays under its task's prefix and names a plain
// file. Run with go test -fuzz FuzzParse ./artifactkey.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		Key(task, "report.md"), "tasks/../secrets/x", "/" + Key(task, "x"), Key(task, "..%2fx"),
		Key(task, "a/b"), Key(task, `a\b`), Key(task, "a\x00"), Key(task, ".hidden"), Key(task, "\uff0e\uff0e"),
		"tasks/" + strings.ToUpper(task) + "/artifacts/x", URI(task, "x"),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, key string) {
		id, name, err := Parse(key)
		if err != nil {
			return
		}
		if Key(id, name) != key {
			t.Fatalf("accepted %q but it rebuilds as %q", key, Key(id, name))
		}
		if !strings.HasPrefix(key, TaskPrefix(id)) || strings.ContainsAny(name, "/\\%\x00") || strings.Contains(name, "..") ||
			strings.HasPrefix(name, ".") || strings.HasPrefix(name, "-") || CheckName(name) != nil {
			t.Fatalf("accepted a key with an unsafe name: %q", key)
		}
		if _, _, err := ParseURI(URI(id, name)); err != nil {
			t.Fatalf("accepted key %q has no valid URI: %v", key, err)
		}
	})
}
