package metrics

import (
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/prometheus/client_golang/prometheus"
)

// The OpenTelemetry MCP semantic conventions' server histogram,
// mcp.server.operation.duration in seconds, as Prometheus names it
// (dots become underscores, the unit a suffix): one observation per
// tools/call, from its arrival to its result, denials and refusals
// included. Its labels are the conventions' attributes, likewise renamed.
const operationName = "mcp_server_operation_duration_seconds"

// operationBuckets are the conventions' recommended boundaries.
var operationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// ErrorType values of the error_type label: a result with isError is a
// tool_error (the conventions' value); a JSON-RPC error is _OTHER.
const (
	ToolError  = "tool_error"
	OtherError = "_OTHER"
)

func newOperation(reg *prometheus.Registry) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: operationName,
		Help:    "MCP request duration as observed on the server, from its arrival to its result (OpenTelemetry MCP semantic conventions: mcp.server.operation.duration).",
		Buckets: operationBuckets}, []string{"mcp_method_name", "gen_ai_tool_name", "mcp_protocol_version", "error_type"})
	reg.MustRegister(h)
	return h
}

// ObserveCall records one tools/call of tool that took d: isError for a
// result with isError set, err for a JSON-RPC error. The protocol version
// is the one in effect for the request; one toolwarden does not know is
// _other, so a client cannot grow the series.
func (m *Metrics) ObserveCall(tool, protocolVersion string, isError bool, err error, d time.Duration) {
	errType := ""
	switch {
	case err != nil:
		errType = OtherError
	case isError:
		errType = ToolError
	}
	if !slices.Contains(mcp.ValidProtocolVersions, protocolVersion) {
		protocolVersion = Other
	}
	m.operation.WithLabelValues("tools/call", m.tool(tool), protocolVersion, errType).Observe(d.Seconds())
}
