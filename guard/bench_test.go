package guard

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
)

// benchPolicy is a typical read-only policy: seven allow globs, one deny.
func benchPolicy(b *testing.B) Policy {
	p, err := NewPolicy([]string{
		"list_directory", "directory_tree", "search_*", "grep_files", "file_info", "read_multiple_files", "read_file",
	}, []string{"write_*"})
	require.NoError(b, err)
	return p
}

func BenchmarkDecide(b *testing.B) {
	v := newTestValidator(b, "read_file")
	policy := benchPolicy(b)
	info := &ToolInfo{Name: "read_file", PathArgs: []string{"path", "paths"}}
	call := Call{Tool: "read_file", Session: "s", Args: decodeJSON(b, `{"path":"src/main.go"}`)}
	limits := Limits{MaxCalls: 10000, MaxOutputBytes: 1 << 28}
	state := State{Calls: 12, OutputBytes: 4096}
	b.ReportAllocs()
	for b.Loop() {
		if d := Decide(call, info, policy, limits, state, v); d.Outcome != Allow {
			b.Fatal(d)
		}
	}
}

func BenchmarkAdmitFinish(b *testing.B) {
	v := newTestValidator(b, "read_file")
	g := New(Config{Policy: benchPolicy(b), Limits: Limits{MaxCalls: 1 << 62, MaxOutputBytes: 1 << 62}, MaxOutputBytes: 1 << 20},
		[]ToolInfo{{Name: "read_file", PathArgs: []string{"path", "paths"}}}, v, audit.Discard{})
	call := Call{Tool: "read_file", Session: "s", Args: decodeJSON(b, `{"path":"src/main.go"}`)}
	res := mcp.NewToolResultText("package main\n\nfunc main() {}\n")
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
}

// BenchmarkValidateHugeExponent measures a number the JSON Schema library
// would check with big.Rat at great cost (10^999999 built exactly): the
// validator must refuse it cheaply before the schema runs.
func BenchmarkValidateHugeExponent(b *testing.B) {
	v := newTestValidator(b, "read_file")
	args := decodeJSON(b, `{"path":"a","count":1e999999}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate("read_file", args); err == nil || err.Rule != "args.number" {
			b.Fatalf("want args.number, got %v", err)
		}
	}
}

// BenchmarkAuditWriteFloor is the write(2) of one 400-byte line to an
// O_APPEND file on the same disk, the floor of BenchmarkAuditAppend.
func BenchmarkAuditWriteFloor(b *testing.B) {
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "floor"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	require.NoError(b, err)
	defer f.Close()
	line := append(bytes.Repeat([]byte("x"), 399), '\n')
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Write(line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFirstValidate is a tool's first call's validation: its
// schema compiled, then the arguments checked (the cost moved from
// start-up to the first call of each tool).
func BenchmarkFirstValidate(b *testing.B) {
	raw := fileSchema(b)
	args := decodeJSON(b, `{"path":"src/main.go"}`)
	b.ReportAllocs()
	for b.Loop() {
		v, err := NewValidator(map[string]json.RawMessage{"read_file": raw}, nil)
		require.NoError(b, err)
		if err := v.Validate("read_file", args); err != nil {
			b.Fatal(err)
		}
	}
}
