package graph

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
)

// query is one statement the fake received.
type query struct {
	cypher string
	params map[string]any
}

// fakeRunner is a hand-written Runner: it records every statement and
// answers with the records that respond returns for it; a nil respond
// answers every statement with one record of found nodes.
type fakeRunner struct {
	mu      sync.Mutex
	queries []query
	modes   []string
	respond func(cypher string) ([]Record, error)
}

func (f *fakeRunner) Read(ctx context.Context, w Work) (any, error)  { return f.exec(ctx, "read", w) }
func (f *fakeRunner) Write(ctx context.Context, w Work) (any, error) { return f.exec(ctx, "write", w) }

func (f *fakeRunner) exec(ctx context.Context, mode string, w Work) (any, error) {
	f.mu.Lock()
	f.modes = append(f.modes, mode)
	f.mu.Unlock()
	v, err := w(ctx, f)
	if err != nil {
		return nil, mapError(ctx, err)
	}
	return v, nil
}

func (f *fakeRunner) Query(_ context.Context, cypher string, params map[string]any) ([]Record, error) {
	f.mu.Lock()
	f.queries = append(f.queries, query{cypher, params})
	f.mu.Unlock()
	if f.respond != nil {
		return f.respond(cypher)
	}
	return []Record{found}, nil
}

// found is a record in which every existence column is true and nothing
// else is set.
var found = Record{"mission": false, "task": true, "parent_found": true, "child_found": true, "task_found": true,
	"dep_found": true, "id": "0b6d3c7e-8f52-4a1e-9a59-3c1f2a4b5d6e"}

// toolByName returns the tool of s named name.
func toolByName(s *Set, name string) tools.Tool {
	for _, t := range s.Tools() {
		if t.Tool.Name == name {
			return t
		}
	}
	panic("no tool " + name)
}

// invoke calls the named tool's handler directly (no guard) and returns
// the error code ("" for success) and the result's text.
func invoke(s *Set, name string, args map[string]any) (toolerr.Code, string) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	raw, _ := json.Marshal(args)
	req.Params.RawArguments = raw
	res, err := toolByName(s, name).Handler(context.Background(), req)
	if err != nil {
		return toolerr.Internal, err.Error()
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return toolerr.ErrorCode(res), text.String()
}
