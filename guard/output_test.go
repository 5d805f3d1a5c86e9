package guard

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// markerPrefix is the fixed start of TruncationMarker.
var markerPrefix = strings.SplitN(TruncationMarker, "%", 2)[0]

func TestCapOutputUnderTheCap(t *testing.T) {
	tests := []struct {
		name     string
		res      *mcp.CallToolResult
		max      int
		wantSize int
	}{
		{name: "empty", res: &mcp.CallToolResult{}, max: 10, wantSize: 0},
		{name: "text well under", res: mcp.NewToolResultText("hello"), max: 10, wantSize: 5},
		{name: "text exactly at the cap", res: mcp.NewToolResultText("0123456789"), max: 10, wantSize: 10},
		{name: "two texts", res: &mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewTextContent("abc"), mcp.NewTextContent("de")}}, max: 10, wantSize: 5},
		{name: "image counts its data", res: &mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewImageContent("QUJD", "image/png")}}, max: 10, wantSize: 4},
		{name: "error results are capped too but pass when small", res: mcp.NewToolResultError("bad"), max: 10, wantSize: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, size := capOutput(tt.res, tt.max)
			require.Same(t, tt.res, out, "a result under the cap is returned unchanged")
			require.Equal(t, tt.wantSize, size)
		})
	}
}

func TestCapOutputOverTheCap(t *testing.T) {
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		max  int
		// wantFrom is the text the preview must start from.
		wantFrom string
	}{
		{name: "ascii text", res: mcp.NewToolResultText(strings.Repeat("a", 100)), max: 40,
			wantFrom: strings.Repeat("a", 100)},
		{name: "several texts", res: &mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewTextContent(strings.Repeat("x", 30)), mcp.NewTextContent(strings.Repeat("y", 30))}}, max: 50,
			wantFrom: strings.Repeat("x", 30) + strings.Repeat("y", 30)},
		{name: "image over the cap", res: &mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewImageContent(strings.Repeat("Q", 200), "image/png")}}, max: 100},
		{name: "audio over the cap", res: &mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewAudioContent(strings.Repeat("Q", 200), "audio/wav")}}, max: 100},
		{name: "embedded resource over the cap", res: &mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "file:///a", Text: strings.Repeat("r", 200)})}}, max: 100},
		{name: "structured content counts", res: &mcp.CallToolResult{
			Content:           []mcp.Content{mcp.NewTextContent("short")},
			StructuredContent: map[string]any{"data": strings.Repeat("s", 100)},
		}, max: 50, wantFrom: "short"},
		{name: "structured content alone is previewed as JSON", res: &mcp.CallToolResult{
			StructuredContent: map[string]any{"data": strings.Repeat("s", 100)},
		}, max: 50, wantFrom: `{"data":"` + strings.Repeat("s", 100) + `"}`},
		{name: "zero cap", res: mcp.NewToolResultText("a"), max: 0, wantFrom: "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, size := capOutput(tt.res, tt.max)
			require.NotSame(t, tt.res, out)
			require.True(t, out.IsError)
			require.Nil(t, out.StructuredContent, "structured content cannot be cut and is dropped")
			require.Len(t, out.Content, 2)

			e, ok := toolerr.FromResult(out)
			require.True(t, ok)
			require.Equal(t, toolerr.LimitExceeded, e.Code)
			require.Equal(t, "limits.max_output_bytes_per_call", e.Rule)
			require.Contains(t, e.Message, fmt.Sprintf("(%d)", tt.max))
			require.Equal(t, toolerr.LimitExceeded, toolerr.ErrorCode(out))

			preview := out.Content[1].(mcp.TextContent).Text
			require.Contains(t, preview, markerPrefix)
			require.Equal(t, len(preview), size, "the session is charged for what the model receives")
			body, _, _ := strings.Cut(preview, markerPrefix)
			require.LessOrEqual(t, len(body), tt.max/2)
			require.True(t, strings.HasPrefix(tt.wantFrom, body), "preview %q is not the start of the output", body)
			if tt.wantFrom != "" && tt.max >= 2 {
				require.NotEmpty(t, body)
			}
		})
	}
}

func TestCapOutputReportsTheFullSize(t *testing.T) {
	res := &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(strings.Repeat("t", 60))},
		StructuredContent: map[string]any{"k": "v"}, // {"k":"v"} is 9 bytes
	}
	out, _ := capOutput(res, 64)
	require.True(t, out.IsError)
	preview := out.Content[1].(mcp.TextContent).Text
	require.True(t, strings.HasSuffix(preview, fmt.Sprintf(TruncationMarker, 32, 69)), "preview: %q", preview)
}

func TestCapOutputNeverSplitsARune(t *testing.T) {
	// One-, two-, three- and four-byte runes, so every cut point is tried.
	text := strings.Repeat("aé€😀", 20)
	for max := 0; max < len(text); max++ {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			out, _ := capOutput(mcp.NewToolResultText(text), max)
			require.True(t, out.IsError)
			preview := out.Content[1].(mcp.TextContent).Text
			body, _, ok := strings.Cut(preview, markerPrefix)
			require.True(t, ok)
			require.True(t, utf8.ValidString(body), "preview %q splits a rune", body)
			require.True(t, strings.HasPrefix(text, body))
			require.LessOrEqual(t, len(body), max/2)
			require.Greater(t, len(body), max/2-4, "at most one rune is dropped")
		})
	}
}

func TestCapOutputNilResult(t *testing.T) {
	out, size := capOutput(nil, 100)
	require.Equal(t, 0, size)
	require.Equal(t, toolerr.Internal, toolerr.ErrorCode(out))
}

func TestTruncateUTF8(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},
		{"abc", 10, "abc"},
		{"abc", 0, ""},
		{"é", 1, ""},
		{"aé", 2, "a"},
		{"😀", 3, ""},
		{"😀x", 4, "😀"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q/%d", tt.s, tt.n), func(t *testing.T) {
			require.Equal(t, tt.want, truncateUTF8(tt.s, tt.n))
		})
	}
}

// BenchmarkCapOutput measures a result under the cap: three texts, and
// structured content alone.
func BenchmarkCapOutput(b *testing.B) {
	texts := &mcp.CallToolResult{Content: []mcp.Content{
		mcp.NewTextContent(strings.Repeat("a", 4096)), mcp.NewTextContent(strings.Repeat("b", 4096)), mcp.NewTextContent("c"),
	}}
	structuredOnly := &mcp.CallToolResult{StructuredContent: map[string]any{"content": strings.Repeat("x", 4096), "lines": 1}}
	for name, res := range map[string]*mcp.CallToolResult{"texts": texts, "structured": structuredOnly} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, size := capOutput(res, 1<<20); size == 0 {
					b.Fatal(size)
				}
			}
		})
	}
}
