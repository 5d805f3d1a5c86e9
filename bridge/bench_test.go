package bridge_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/bridge"
	fake "github.com/toolwarden/toolwarden/internal/llmfake/gemini"
	"google.golang.org/genai"
)

// BenchmarkAdaptSchemas adapts every toolwarden tool's schema, as the
// bridge does once at start.
func BenchmarkAdaptSchemas(b *testing.B) {
	h := newHarness(b, setup{}, fake.Reply(fake.Text("ok")))
	var schemas []json.RawMessage
	for _, tool := range h.b.Tools() {
		raw, _ := json.Marshal(tool.InputSchema)
		schemas = append(schemas, raw)
	}
	for b.Loop() {
		for _, s := range schemas {
			if _, _, err := bridge.AdaptSchema(s); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkFit trims a 400-message history (200 call/response pairs of
// 2 KB each) to a budget, as the bridge does before every request.
func BenchmarkFit(b *testing.B) {
	h := &bridge.History{}
	h.Add(genai.NewContentFromText("first", genai.RoleUser))
	for i := range 200 {
		id := fmt.Sprint(i)
		h.Add(&genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: id, Name: "read_file", Args: map[string]any{"path": "a"}}}}},
			&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: id, Name: "read_file", Response: map[string]any{"output": strings.Repeat("x", 2048)}}}}})
	}
	for b.Loop() {
		if _, dropped := h.Fit(50_000); dropped == 0 {
			b.Fatal("nothing dropped")
		}
	}
}

// BenchmarkParseBlocks parses a 10-block model turn of the json-block
// protocol.
func BenchmarkParseBlocks(b *testing.B) {
	text := strings.Repeat("Some prose.\n```json\n{\"tool\": \"read_file\", \"arguments\": {\"path\": \"src/main.go\"}}\n```\n", 10)
	for b.Loop() {
		if len(bridge.ParseBlocks(text)) != 10 {
			b.Fatal("blocks lost")
		}
	}
}
