package bridge_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/bridge"
	fake "github.com/toolwarden/toolwarden/internal/llmfake/gemini"
)

func TestJSONBlockRoundTrip(t *testing.T) {
	first := "Let me look.\n```json\n{\"tool\": \"read_file\", \"arguments\": {\"path\": \"hello.txt\"}}\n```\n" +
		"```json\n{\"tool\": \"read_file\", \"arguments\": {\"path\": \"notes.md\"}, \"sudo\": true}\n```\n"
	h := newHarness(t, setup{opts: bridge.Options{Protocol: bridge.ProtocolJSONBlock}},
		fake.Reply(fake.Text(first)),
		fake.Reply(fake.Text("hello.txt says hello.")))
	answer, err := h.b.Ask(context.Background(), "read hello.txt")
	require.NoError(t, err)
	assert.Equal(t, "hello.txt says hello.", answer)

	reqs := h.fake.Requests()
	require.Len(t, reqs, 2)
	assert.Nil(t, reqs[0].Body["tools"], "no function declarations in the json-block protocol")
	system := mustJSON(reqs[0].Body["systemInstruction"])
	assert.Contains(t, system, "## read_file")
	assert.Contains(t, system, "json-result")

	results := resultBlocks(t, reqs[1].LastText())
	require.Len(t, results, 2)
	assert.EqualValues(t, 1, results[0]["call"])
	assert.Contains(t, mustJSON(results[0]["output"]), "hello from toolwarden")
	assert.EqualValues(t, 2, results[1]["call"])
	e := results[1]["error"].(map[string]any)
	assert.Equal(t, "bridge.malformed_block", e["code"])
	assert.Contains(t, e["message"], "sudo")
	assert.Contains(t, h.activity.String(), "× json block 2")
}

var resultRE = regexp.MustCompile("(?s)```json-result\n(.*?)\n```")

func resultBlocks(t *testing.T, text string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range resultRE.FindAllStringSubmatch(text, -1) {
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(m[1]), &v))
		out = append(out, v)
	}
	return out
}

func TestParseBlocksHostile(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		tool       string
		errLike    string
	}{
		{"valid", "```json\n{\"tool\":\"read_file\",\"arguments\":{\"path\":\"a\"}}\n```", "read_file", ""},
		{"empty args", "```json\n{\"tool\":\"list_directory\",\"arguments\":{}}\n```", "list_directory", ""},
		{"extra field", "```json\n{\"tool\":\"x\",\"arguments\":{},\"approve\":true}\n```", "", "approve"},
		{"two values", "```json\n{\"tool\":\"x\",\"arguments\":{}}\n{\"tool\":\"y\",\"arguments\":{}}\n```", "", "more than one"},
		{"no tool", "```json\n{\"arguments\":{}}\n```", "", "no \"tool\""},
		{"empty tool", "```json\n{\"tool\":\"\",\"arguments\":{}}\n```", "", "no \"tool\""},
		{"args not object", "```json\n{\"tool\":\"x\",\"arguments\":[1]}\n```", "", "object"},
		{"args missing", "```json\n{\"tool\":\"x\"}\n```", "", "object"},
		{"not json", "```json\n{tool: x}\n```", "", "not one JSON object"},
		{"unclosed", "```json\n{\"tool\":\"x\",\"arguments\":{}}\n", "", "not closed"},
		{"empty block", "```json\n```", "", "not one JSON object"},
		{"array", "```json\n[{\"tool\":\"x\"}]\n```", "", "not one JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := bridge.ParseBlocks(tc.text)
			require.Len(t, calls, 1)
			if tc.errLike == "" {
				require.NoError(t, calls[0].Err)
				assert.Equal(t, tc.tool, calls[0].Tool)
				return
			}
			require.Error(t, calls[0].Err)
			assert.Contains(t, calls[0].Err.Error(), tc.errLike)
		})
	}
	// Other fences are not calls.
	assert.Empty(t, bridge.ParseBlocks("```go\nfmt.Println()\n```\n```json-result\n{}\n```\nplain text"))
	assert.Len(t, bridge.ParseBlocks(strings.Repeat("```json\n{\"tool\":\"a\",\"arguments\":{}}\n```\n", 3)), 3)
}

func FuzzParseBlocks(f *testing.F) {
	f.Add("```json\n{\"tool\":\"read_file\",\"arguments\":{\"path\":\"a\"}}\n```")
	f.Add("```json\n{\"tool\":\"\",\"arguments\":null}\n```")
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range bridge.ParseBlocks(s) {
			if c.Err == nil && (c.Tool == "" || c.Args == nil) {
				t.Fatalf("accepted a call without a tool or arguments: %+v", c)
			}
		}
	})
}

// TestJSONBlockTruncationKeepsBlocksWithResults: in the json-block
// protocol a call is a model turn's block and its response the next user
// turn's result block; truncation must not keep one without the other.
func TestJSONBlockTruncationKeepsBlocksWithResults(t *testing.T) {
	var turns []fake.Turn
	for range 6 {
		turns = append(turns, fake.Reply(fake.Text("```json\n{\"tool\": \"read_file\", \"arguments\": {\"path\": \"notes.md\"}}\n```\n")))
	}
	turns = append(turns, fake.Reply(fake.Text("done")))
	h := newHarness(t, setup{opts: bridge.Options{Protocol: bridge.ProtocolJSONBlock, MaxContextTokens: 300}}, turns...)
	h.fake.AnswerSide(summaries)
	_, err := h.b.Ask(context.Background(), "FIRST QUESTION: summarise the notes")
	require.NoError(t, err)
	truncated := false
	for i, r := range h.fake.Filter(isTurn) {
		contents := r.Contents()
		truncated = truncated || len(contents) < 2*i+1
		for j, c := range contents {
			if strings.Contains(mustJSON(c), "json-result") {
				require.Positive(t, j)
				assert.Contains(t, mustJSON(contents[j-1]), `\"tool\": \"read_file\"`, "request %d content %d: results follow their blocks", i, j)
			}
		}
	}
	assert.True(t, truncated, "the budget made the bridge summarise turns")
}
