package guard

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/internal/workspacepath"
)

// FuzzValidate feeds arbitrary JSON to the validator of a tool with path
// arguments. It must never panic, must only answer with argument errors,
// and whatever it accepts must hold clean workspace paths.
func FuzzValidate(f *testing.F) {
	v := newTestValidator(f, "read_file")
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var args any
		if err := dec.Decode(&args); err != nil {
			return
		}
		verr := v.Validate("read_file", args)
		if verr != nil {
			switch verr.Code {
			case toolerr.InvalidSchema, toolerr.PathInvalid, toolerr.PathOutsideWorkspace:
			default:
				t.Fatalf("unexpected code %s for %q: %v", verr.Code, data, verr)
			}
			if verr.Rule == "" {
				t.Fatalf("error without a rule for %q: %v", data, verr)
			}
			return
		}
		m, ok := args.(map[string]any)
		if !ok {
			t.Fatalf("accepted arguments that are not an object: %q", data)
		}
		p, ok := m["path"].(string)
		if !ok {
			t.Fatalf("accepted a missing or non-string path: %q", data)
		}
		if _, err := workspacepath.Clean(p); err != nil {
			t.Fatalf("accepted path %q that CleanPath rejects: %v", p, err)
		}
		for k := range m {
			if k != "path" && k != "count" && k != "paths" {
				t.Fatalf("accepted unknown field %q: %q", k, data)
			}
		}
		if list, present := m["paths"]; present && list != nil {
			items, ok := list.([]any)
			if !ok {
				t.Fatalf("accepted non-list paths: %q", data)
			}
			for _, it := range items {
				s, ok := it.(string)
				if !ok {
					t.Fatalf("accepted a non-string element in paths: %q", data)
				}
				if _, err := workspacepath.Clean(s); err != nil {
					t.Fatalf("accepted list path %q that CleanPath rejects: %v", s, err)
				}
			}
		}
	})
}
