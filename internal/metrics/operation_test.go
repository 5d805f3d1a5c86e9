package metrics

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestOperationDuration: mcp_server_operation_duration_seconds, the MCP
// semantic conventions' server histogram, with error_type tool_error for
// an isError result and _OTHER for a JSON-RPC error; a tool not in the
// catalog and a protocol version toolwarden does not know are _other.
func TestOperationDuration(t *testing.T) {
	m := New([]string{"read_file"})
	m.ObserveCall("read_file", "2025-11-25", false, nil, 3*time.Millisecond)
	m.ObserveCall("read_file", "2025-11-25", true, nil, time.Millisecond)
	m.ObserveCall("read_file", "2025-11-25", true, nil, time.Millisecond)
	m.ObserveCall("made_up", "9999-01-01-attacker", false, errors.New("boom"), time.Second)
	fams := scrape(t, m)
	labels := func(tool, version, errType string) map[string]string {
		return map[string]string{"mcp_method_name": "tools/call", "gen_ai_tool_name": tool, "mcp_protocol_version": version, "error_type": errType}
	}
	require.Equal(t, 1.0, value(t, fams, operationName, labels("read_file", "2025-11-25", "")))
	require.Equal(t, 2.0, value(t, fams, operationName, labels("read_file", "2025-11-25", ToolError)))
	require.Equal(t, 1.0, value(t, fams, operationName, labels(Other, Other, OtherError)))
	h := fams[operationName].Metric[0].Histogram
	require.Len(t, h.Bucket, len(operationBuckets)+1, "and +Inf")
	require.Equal(t, 0.01, h.Bucket[0].GetUpperBound())
}
