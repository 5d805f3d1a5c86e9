package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// The json-block protocol is the fallback for endpoints without function
// calling: the model writes each tool call as a fenced ```json block
// holding exactly {"tool": NAME, "arguments": {...}}, and the bridge
// answers with fenced ```json-result blocks in the next user turn.

// BlockCall is one tool call parsed from a json block; Err is set when the
// block is malformed, and then Tool and Args are not to be used.
type BlockCall struct {
	Tool string
	Args map[string]any
	Err  error
}

type blockBody struct {
	Tool      *string         `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

// ParseBlocks returns the tool calls in a model's text, in order: each
// block opens with a line "```json" and closes with a line "```". A block
// left open is reported as malformed.
func ParseBlocks(text string) []BlockCall {
	var calls []BlockCall
	var body []string
	open := false
	for line := range strings.Lines(text) {
		trimmed := strings.TrimRight(line, " \t\r\n")
		switch {
		case !open && trimmed == "```json":
			open, body = true, body[:0]
		case open && trimmed == "```":
			calls = append(calls, parseBlock(strings.Join(body, "")))
			open = false
		case open:
			body = append(body, line)
		}
	}
	if open {
		calls = append(calls, BlockCall{Err: errors.New("a ```json block is not closed with ``` on its own line")})
	}
	return calls
}

// parseBlock parses one block strictly: one JSON object, no other fields,
// a non-empty tool name, arguments an object.
func parseBlock(body string) BlockCall {
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	var b blockBody
	if err := dec.Decode(&b); err != nil {
		return BlockCall{Err: fmt.Errorf("the block is not one JSON object with only \"tool\" and \"arguments\": %v", err)}
	}
	if dec.More() {
		return BlockCall{Err: errors.New("the block holds more than one JSON value; write one call per block")}
	}
	if b.Tool == nil || *b.Tool == "" {
		return BlockCall{Err: errors.New(`the block has no "tool" name`)}
	}
	var args map[string]any
	raw := bytes.TrimSpace(b.Arguments)
	if len(raw) == 0 || raw[0] != '{' {
		return BlockCall{Tool: *b.Tool, Err: errors.New(`"arguments" must be a JSON object (use {} for none)`)}
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return BlockCall{Tool: *b.Tool, Err: fmt.Errorf(`"arguments" is not valid JSON: %v`, err)}
	}
	return BlockCall{Tool: *b.Tool, Args: args}
}

// resultBlock renders the answer to call number n as a fenced block.
func resultBlock(n int, tool string, response map[string]any) string {
	body := map[string]any{"call": n, "tool": tool}
	for k, v := range response {
		body[k] = v
	}
	b, err := json.Marshal(body)
	if err != nil {
		b = []byte(`{"error":{"code":"bridge.encoding","message":"the result could not be encoded"}}`)
	}
	return "```json-result\n" + string(b) + "\n```"
}

// malformedResponse is what a malformed block gets back.
func malformedResponse(err error) map[string]any {
	return errorResponse("bridge.malformed_block", err.Error(),
		"Write each call as a fenced ```json block holding exactly {\"tool\": \"NAME\", \"arguments\": {...}}.")
}

// blockPrompt is the system prompt of the json-block protocol.
func blockPrompt(tools []mcp.Tool) string {
	var b strings.Builder
	b.WriteString("You can call tools. To call one, write a fenced block that starts with ```json and holds exactly one object " +
		"{\"tool\": \"NAME\", \"arguments\": {...}}; you may write several blocks. Then stop and wait: the results come back " +
		"in ```json-result blocks, with the same call numbers, in order. Write no ```json block when you give your final answer.\n\nTools:\n")
	for _, t := range tools {
		schema, _ := json.Marshal(t.InputSchema)
		if len(t.RawInputSchema) > 0 {
			schema = t.RawInputSchema
		}
		fmt.Fprintf(&b, "\n## %s\n%s\nArguments schema: %s\n", t.Name, t.Description, schema)
	}
	return b.String()
}
