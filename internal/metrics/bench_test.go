package metrics

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/guard"
)

type noop struct{}

func (noop) Observe(guard.Event) {}

// BenchmarkAdmitFinish is one allowed call through the guard (decision,
// output filter, two audit lines to a discarding auditor) with no
// observer (the default), a no-op one and the Prometheus one, in one run:
// the observer's cost beside the work it watches.
func BenchmarkAdmitFinish(b *testing.B) {
	type args struct {
		Path string `json:"path"`
	}
	schema := mcp.NewTool("read_file", mcp.WithInputSchema[args]()).RawInputSchema
	v, err := guard.NewValidator(map[string]json.RawMessage{"read_file": schema}, map[string][]string{"read_file": {"path"}})
	require.NoError(b, err)
	policy, err := guard.NewPolicy([]string{"read_file"}, nil)
	require.NoError(b, err)
	var callArgs any
	require.NoError(b, json.Unmarshal([]byte(`{"path":"src/main.go"}`), &callArgs))
	call := guard.Call{Tool: "read_file", Session: "s", Args: callArgs}
	res := mcp.NewToolResultText("package main\n\nfunc main() {}\n")
	for _, c := range []struct {
		name string
		obs  guard.Observer
	}{{"none", nil}, {"noop", noop{}}, {"prometheus", New([]string{"read_file"})}} {
		b.Run(c.name, func(b *testing.B) {
			g := guard.New(guard.Config{Policy: policy, Limits: guard.Limits{MaxCalls: 1 << 62, MaxOutputBytes: 1 << 62}, MaxOutputBytes: 1 << 20},
				[]guard.ToolInfo{{Name: "read_file", PathArgs: []string{"path"}}}, v, audit.Discard{})
			if c.obs != nil {
				g.SetObserver(c.obs)
			}
			b.ReportAllocs()
			for b.Loop() {
				t, denial := g.Admit(call)
				if denial != nil {
					b.Fatal(denial)
				}
				if out := t.Finish(res, nil); out.IsError {
					b.Fatal(out)
				}
			}
		})
	}
}
