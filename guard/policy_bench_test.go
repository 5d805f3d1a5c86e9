package guard

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
)

// fullPolicy is a large policy with every check enabled: 40 allow and 12
// deny tool globs, 24 capability grants and 12 denials, 12 per-tool limits
// with rates, a session rate, a bytes-in cap and a budget.
func fullPolicy(b *testing.B) (Policy, Limits) {
	var allow, deny, grant, revoke []string
	for i := range 40 {
		allow = append(allow, fmt.Sprintf("tool_%02d_*", i))
	}
	allow = append(allow, "read_*", "list_*")
	for i := range 12 {
		deny = append(deny, fmt.Sprintf("danger_%02d*", i))
	}
	for i := range 20 {
		grant = append(grant, fmt.Sprintf("fs:read:pkg%02d/**", i))
	}
	grant = append(grant, "fs:read:src/**", "fs:write:src/gen/**", "graph:write:*", "net:connect:*.example.com:443")
	for i := range 12 {
		revoke = append(revoke, fmt.Sprintf("fs:read:src/secret%02d/**", i))
	}
	revoke = append(revoke, "fs:read:**/*.pem")
	l := Limits{MaxCalls: 1 << 40, MaxOutputBytes: 1 << 60, RatePerMinute: 1e9, MaxBytesIn: 1 << 60, Budget: 1 << 60}
	for i := range 11 {
		l.Tools = append(l.Tools, ToolLimits{Glob: fmt.Sprintf("tool_%02d_*", i), MaxCalls: 5, RatePerMinute: 10})
	}
	l.Tools = append(l.Tools, ToolLimits{Glob: "read_*", MaxCalls: 1 << 40, RatePerMinute: 1e9, MaxBytesIn: 1 << 60, MaxBytesOut: 1 << 60, Cost: 1})
	return policyOf(b, allow, deny, grant, revoke), l
}

// reportP50 times each run of f and reports the median as p50-ns/op.
func reportP50(b *testing.B, f func()) {
	var times []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		f()
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns/op")
	b.ReportMetric(float64(times[len(times)*99/100].Nanoseconds()), "p99-ns/op")
}

func BenchmarkDecideFullPolicy(b *testing.B) {
	policy, limits := fullPolicy(b)
	v := newTestValidator(b, "read_file")
	info := &ToolInfo{Name: "read_file", PathArgs: []string{"path", "paths"}, Capabilities: []string{"fs:read:{path}", "fs:read:{paths}"}}
	call := Call{Tool: "read_file", Args: decodeJSON(b, `{"path":"src/main.go","paths":["pkg07/a.go","pkg19/b/c.go"]}`), ArgBytes: 60}
	state := State{Tokens: 100, Tools: map[string]ToolState{"read_*": {Tokens: 100}}}
	reportP50(b, func() {
		if d := Decide(call, info, policy, limits, state, v); d.Outcome != Allow {
			b.Fatal(d)
		}
	})
}

func BenchmarkAdmitFinishFullPolicy(b *testing.B) {
	policy, limits := fullPolicy(b)
	info := ToolInfo{Name: "read_file", PathArgs: []string{"path", "paths"}, Capabilities: []string{"fs:read:{path}", "fs:read:{paths}"}}
	g := New(Config{Policy: policy, Limits: limits, MaxOutputBytes: 1 << 20}, []ToolInfo{info}, newTestValidator(b, "read_file"), audit.Discard{})
	call := Call{Tool: "read_file", Identity: "local", Args: decodeJSON(b, `{"path":"src/main.go","paths":["pkg07/a.go","pkg19/b/c.go"]}`), ArgBytes: 60}
	res := mcp.NewToolResultText("package main\n")
	reportP50(b, func() {
		t, denial := g.Admit(call)
		if denial != nil {
			b.Fatal(denial)
		}
		t.Finish(res, nil)
	})
	require.Equal(b, Allow, g.Explain(call).Outcome)
}
