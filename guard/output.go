package guard

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/internal/structured"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// TruncationMarker ends output that the guard cut at the per-call cap.
const TruncationMarker = "\n[toolwarden: output truncated at %d bytes; the full output was %d bytes]"

// capOutput measures a result (every text and resource content, and the
// structured content) and returns it with its size. A result over max bytes
// becomes a limit.exceeded error whose text is the start of the output and a
// truncation marker: structured content cannot be cut without breaking its
// schema, so it is dropped.
func capOutput(res *mcp.CallToolResult, max int) (*mcp.CallToolResult, int) {
	if res == nil {
		return toolerr.Result(toolerr.New(toolerr.Internal, "", "the tool returned no result")), 0
	}
	size := measure(res)
	if size <= max {
		return res, size
	}
	preview := truncateUTF8(previewText(res), max/2) + fmt.Sprintf(TruncationMarker, max/2, size)
	e := toolerr.New(toolerr.LimitExceeded,
		"Ask for less: use offset/limit, a narrower path or pattern, or fewer files per call.",
		"the tool's output of %d bytes exceeds limits.max_output_bytes_per_call (%d)", size, max).
		WithRule("limits.max_output_bytes_per_call")
	out := toolerr.Result(e)
	out.Content = append(out.Content, mcp.NewTextContent(preview))
	return out, len(preview)
}

// measure returns the size of a result: its text, data and resources,
// and its structured content's JSON.
func measure(res *mcp.CallToolResult) int {
	size := 0
	for _, c := range res.Content {
		switch x := c.(type) {
		case mcp.TextContent:
			size += len(x.Text)
		case mcp.ImageContent:
			size += len(x.Data)
		case mcp.AudioContent:
			size += len(x.Data)
		case mcp.EmbeddedResource:
			b, _ := json.Marshal(x.Resource)
			size += len(b)
		default:
			b, _ := json.Marshal(x)
			size += len(b)
		}
	}
	if res.StructuredContent != nil {
		b, _ := structured.JSON(res.StructuredContent)
		size += len(b)
	}
	return size
}

// previewText is what the preview of a capped result is cut from: its
// texts, or the structured content's JSON when it has none. It is made
// only for a result over the cap.
func previewText(res *mcp.CallToolResult) string {
	var text strings.Builder
	for _, c := range res.Content {
		if x, ok := c.(mcp.TextContent); ok {
			text.WriteString(x.Text)
		}
	}
	if text.Len() == 0 && res.StructuredContent != nil {
		b, _ := structured.JSON(res.StructuredContent)
		return string(b)
	}
	return text.String()
}

// truncateUTF8 cuts s to at most n bytes without splitting a rune.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
