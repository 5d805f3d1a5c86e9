// Command gauntletupstream is an MCP server over stdio that plays one
// agent-egress-bench case (e2e/testdata/agent-egress-bench) as an upstream
// of toolwarden, for e2e's TestGauntlet. It speaks JSON-RPC itself, not
// through an SDK, so that a case's tool definitions and results reach
// toolwarden exactly as the case wrote them:
//
//   - mcp_tool_definition: tools/list answers the case's tools verbatim;
//   - mcp_tool_result: the tool "search" answers with the case's result;
//   - response_content: the tool "fetch" answers with the case's response
//     body as text, as a fetching tool would;
//   - mcp_tool_call and mcp_tool_sequence: each tool the case calls is
//     listed (read-only, any arguments) and answers "done".
//
// With --mode-file, a file holding "baseline" makes a definition case list
// its tools with a plain description instead (the definition the operator
// pinned before the "rug pull"); anything else lists the case's.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
)

// bench is the part of a case file this server reads.
type bench struct {
	InputType string `json:"input_type"`
	Payload   struct {
		Messages []struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
			Result json.RawMessage `json:"result"`
		} `json:"jsonrpc_messages"`
		URL          string `json:"url"`
		ResponseBody string `json:"response_body"`
	} `json:"payload"`
}

// request is an incoming JSON-RPC message.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func main() {
	file := flag.String("case", "", "the case file to play")
	modeFile := flag.String("mode-file", "", `a file; "baseline" in it lists the pinned definition`)
	flag.Parse()
	b, err := os.ReadFile(*file)
	if err != nil {
		fail(err)
	}
	var c bench
	if err := json.Unmarshal(b, &c); err != nil {
		fail(err)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var r request
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			fail(err)
		}
		if len(r.ID) == 0 {
			continue // a notification
		}
		var result any
		switch r.Method {
		case "initialize":
			result = map[string]any{
				"protocolVersion": "2025-06-18",
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "gauntlet", "version": "1"},
			}
		case "tools/list":
			result = list(c, baseline(*modeFile))
		case "tools/call":
			result = call(c)
		default:
			result = map[string]any{}
		}
		if err := out.Encode(map[string]any{"jsonrpc": "2.0", "id": r.ID, "result": result}); err != nil {
			fail(err)
		}
	}
}

// baseline reports whether the mode file asks for the pinned definition.
func baseline(modeFile string) bool {
	if modeFile == "" {
		return false
	}
	b, err := os.ReadFile(modeFile)
	return err == nil && strings.TrimSpace(string(b)) == "baseline"
}

// list is the tools/list result for the case.
func list(c bench, baseline bool) json.RawMessage {
	switch c.InputType {
	case "mcp_tool_definition":
		raw := c.Payload.Messages[0].Result
		if baseline {
			return plain(raw)
		}
		return raw
	case "mcp_tool_result":
		return tools("search")
	case "response_content":
		return tools("fetch")
	}
	var names []string
	seen := map[string]bool{}
	for _, m := range c.Payload.Messages {
		if m.Method == "tools/call" && !seen[m.Params.Name] {
			seen[m.Params.Name] = true
			names = append(names, m.Params.Name)
		}
	}
	return tools(names...)
}

// plain is a definition listing with every tool's description replaced
// by a plain one: what the upstream served before it changed.
func plain(raw json.RawMessage) json.RawMessage {
	var l struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		fail(err)
	}
	for _, t := range l.Tools {
		t["description"] = fmt.Sprintf("Runs %v.", t["name"])
	}
	b, _ := json.Marshal(l)
	return b
}

// tools lists read-only tools with the names given that take any
// arguments.
func tools(names ...string) json.RawMessage {
	var l []map[string]any
	for _, n := range names {
		l = append(l, map[string]any{
			"name":        n,
			"description": "Runs " + n + ".",
			"inputSchema": map[string]any{"type": "object", "additionalProperties": true},
			"annotations": map[string]any{"readOnlyHint": true},
		})
	}
	b, _ := json.Marshal(map[string]any{"tools": l})
	return b
}

// call is the tools/call result for the case.
func call(c bench) any {
	switch c.InputType {
	case "mcp_tool_result":
		return c.Payload.Messages[0].Result
	case "response_content":
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": c.Payload.ResponseBody}}}
	}
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gauntletupstream:", err)
	os.Exit(1)
}
