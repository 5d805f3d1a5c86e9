package ship

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/toolwarden/toolwarden/audit"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	logs "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
)

// ScopeName is the instrumentation scope of the shipped audit records.
const ScopeName = "github.com/toolwarden/toolwarden/audit"

// resourceInfo names the server in each batch.
type resourceInfo struct{ replica, version, host string }

// request builds the export request of a batch of spooled lines.
func (s *OTLP) request(lines [][]byte) *collogs.ExportLogsServiceRequest {
	now := uint64(time.Now().UnixNano())
	records := make([]*logs.LogRecord, len(lines))
	for i, l := range lines {
		records[i] = Record(l, now)
	}
	return &collogs.ExportLogsServiceRequest{ResourceLogs: []*logs.ResourceLogs{{
		Resource:  &resourcepb.Resource{Attributes: s.resource.attributes()},
		ScopeLogs: []*logs.ScopeLogs{{Scope: &common.InstrumentationScope{Name: ScopeName}, LogRecords: records}},
	}}}
}

func (r resourceInfo) attributes() []*common.KeyValue {
	attrs := []*common.KeyValue{str("service.name", "toolwarden")}
	for _, kv := range [][2]string{{"service.version", r.version}, {"service.instance.id", r.replica}, {"host.name", r.host}} {
		if kv[1] != "" {
			attrs = append(attrs, str(kv[0], kv[1]))
		}
	}
	return attrs
}

// Record is the OTLP log record of one audit line. Its body is the line
// byte for byte (without the newline), so the copy a collector keeps
// verifies with `toolwarden audit verify` as the file does; the fields a
// SIEM filters on are also attributes, named after the OpenTelemetry MCP
// semantic conventions where they have one (gen_ai.tool.name,
// mcp.method.name, mcp.session.id, error.type), toolwarden.audit.* else.
// The event name is toolwarden.audit.<outcome>; denials, refusals,
// failures, drift and torn lines are WARN, the rest INFO.
func Record(line []byte, observed uint64) *logs.LogRecord {
	line = bytes.TrimSuffix(line, []byte("\n"))
	rec := &logs.LogRecord{ObservedTimeUnixNano: observed,
		Body: &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: string(line)}}}
	var e audit.Entry
	if err := json.Unmarshal(line, &e); err != nil {
		rec.SeverityNumber, rec.SeverityText = logs.SeverityNumber_SEVERITY_NUMBER_WARN, "WARN"
		rec.EventName = "toolwarden.audit.unparsed"
		return rec
	}
	if t, err := time.Parse(time.RFC3339Nano, e.Time); err == nil {
		rec.TimeUnixNano = uint64(t.UnixNano())
	}
	rec.EventName = "toolwarden.audit." + string(e.Outcome)
	rec.SeverityNumber, rec.SeverityText = logs.SeverityNumber_SEVERITY_NUMBER_INFO, "INFO"
	if warnOutcomes[string(e.Outcome)] {
		rec.SeverityNumber, rec.SeverityText = logs.SeverityNumber_SEVERITY_NUMBER_WARN, "WARN"
	}
	rec.Attributes = attributes(&e)
	return rec
}

// warnOutcomes are the outcomes a SIEM should see as warnings.
var warnOutcomes = map[string]bool{"denied": true, "declined": true, "failed": true, "abandoned": true, "drift": true, "torn_tail": true}

// errorOutcomes end a tools/call with an isError result.
var errorOutcomes = map[string]bool{"denied": true, "declined": true, "failed": true}

func attributes(e *audit.Entry) []*common.KeyValue {
	attrs := []*common.KeyValue{
		integer("toolwarden.audit.seq", int64(e.Seq)),
		str("toolwarden.audit.hash", e.Hash),
		str("toolwarden.audit.outcome", string(e.Outcome)),
		str("toolwarden.audit.rule", e.Rule),
	}
	if e.Tool != "-" && e.Tool != "" {
		attrs = append(attrs, str("mcp.method.name", "tools/call"), str("gen_ai.tool.name", e.Tool),
			str("toolwarden.audit.args_sha256", e.ArgsSHA256),
			&common.KeyValue{Key: "toolwarden.audit.duration_ms", Value: &common.AnyValue{Value: &common.AnyValue_DoubleValue{DoubleValue: e.DurationMS}}})
	}
	if errorOutcomes[string(e.Outcome)] {
		attrs = append(attrs, str("error.type", "tool_error"))
	}
	for _, kv := range [][2]string{
		{"mcp.session.id", e.Session}, {"toolwarden.identity", e.Identity}, {"toolwarden.audit.replica", e.Replica},
		{"toolwarden.error.code", e.Code}, {"toolwarden.approval.id", e.Approval}, {"toolwarden.approval.decided_by", e.DecidedBy},
		{"toolwarden.tool.definition_sha256", e.DefinitionSHA256},
	} {
		if kv[1] != "" && kv[1] != "-" {
			attrs = append(attrs, str(kv[0], kv[1]))
		}
	}
	if e.Trusted {
		attrs = append(attrs, &common.KeyValue{Key: "toolwarden.trusted", Value: &common.AnyValue{Value: &common.AnyValue_BoolValue{BoolValue: true}}})
	}
	return attrs
}

func str(k, v string) *common.KeyValue {
	return &common.KeyValue{Key: k, Value: &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: v}}}
}

func integer(k string, v int64) *common.KeyValue {
	return &common.KeyValue{Key: k, Value: &common.AnyValue{Value: &common.AnyValue_IntValue{IntValue: v}}}
}
