package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolwarden/toolwarden/tools"
)

// withPreviews gives every graph write an approval preview: the operation
// (the tool's title) first, then each argument, IDs in full.
func withPreviews(ts []tools.Tool) []tools.Tool {
	for i, t := range ts {
		if t.Meta.RequiresApproval {
			ts[i] = tools.WithPreview(t, writePreview(t.Tool.Name, t.Tool.Annotations.Title))
		}
	}
	return ts
}

func writePreview(name, title string) tools.Preview {
	return func(_ context.Context, raw json.RawMessage) (string, error) {
		var args map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if len(raw) > 0 {
			if err := dec.Decode(&args); err != nil {
				return "", err
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Change the task graph (Neo4j): %s (%s)", title, name)
		for _, k := range slices.Sorted(maps.Keys(args)) {
			v, ok := args[k].(string)
			if !ok {
				enc, _ := json.Marshal(args[k])
				v = string(enc)
			}
			fmt.Fprintf(&b, "\n%s: %s", k, v)
		}
		return b.String(), nil
	}
}
