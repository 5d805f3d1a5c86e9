package audit

import (
	"strconv"

	"github.com/toolwarden/toolwarden/internal/jsonenc"
)

// appendEntry appends e's JSON, byte for byte what json.Marshal(e) gives
// (the chain's hash is taken over that encoding and audit verify checks it
// with json.Marshal), without reflection: one audit line is on the path
// of every call. TestAppendEntryIsJSONMarshal and FuzzAppendEntry hold
// the two together; a field added to Entry must be added here in order.
func appendEntry(b []byte, e *Entry) []byte {
	b, _ = appendEntryAt(b, e)
	return b
}

// appendEntryAt is appendEntry that also returns where the hash's value
// begins (after its opening quote).
func appendEntryAt(b []byte, e *Entry) ([]byte, int) {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = appendMember(b, `,"time":`, e.Time)
	b = appendMember(b, `,"session":`, e.Session)
	b = appendOmitempty(b, `,"identity":`, e.Identity)
	if e.Trusted {
		b = append(b, `,"trusted":true`...)
	}
	b = appendOmitempty(b, `,"replica":`, e.Replica)
	b = appendMember(b, `,"tool":`, e.Tool)
	b = appendMember(b, `,"args_sha256":`, e.ArgsSHA256)
	b = appendMember(b, `,"rule":`, e.Rule)
	b = appendMember(b, `,"outcome":`, string(e.Outcome))
	b = appendOmitempty(b, `,"code":`, e.Code)
	b = append(b, `,"duration_ms":`...)
	b = jsonenc.AppendFloat(b, e.DurationMS)
	b = appendMember(b, `,"prev":`, e.Prev)
	b = append(b, `,"hash":`...)
	at := len(b) + 1
	b = jsonenc.AppendString(b, e.Hash)
	if len(e.DroppedArgs) > 0 {
		b = append(b, `,"dropped_args":[`...)
		for i, s := range e.DroppedArgs {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, s)
		}
		b = append(b, ']')
	}
	b = appendOmitempty(b, `,"approval":`, e.Approval)
	b = appendOmitempty(b, `,"decided_by":`, e.DecidedBy)
	if e.Redactions != 0 {
		b = append(b, `,"redactions":`...)
		b = strconv.AppendInt(b, int64(e.Redactions), 10)
	}
	b = appendOmitempty(b, `,"tools_sha256":`, e.ToolsSHA256)
	b = appendOmitempty(b, `,"version":`, e.Version)
	b = appendOmitempty(b, `,"prev_file":`, e.PrevFile)
	if e.TornBytes != 0 {
		b = append(b, `,"torn_bytes":`...)
		b = strconv.AppendInt(b, e.TornBytes, 10)
	}
	b = appendOmitempty(b, `,"torn_file":`, e.TornFile)
	b = appendOmitempty(b, `,"key_id":`, e.KeyID)
	b = appendOmitempty(b, `,"signature":`, e.Signature)
	b = appendOmitempty(b, `,"definition_sha256":`, e.DefinitionSHA256)
	b = appendOmitempty(b, `,"pinned_sha256":`, e.PinnedSHA256)
	b = appendOmitempty(b, `,"cost":`, e.Cost)
	b = appendOmitempty(b, `,"run_cost":`, e.RunCost)
	if e.InputTokens != 0 {
		b = append(b, `,"input_tokens":`...)
		b = strconv.AppendInt(b, e.InputTokens, 10)
	}
	if e.OutputTokens != 0 {
		b = append(b, `,"output_tokens":`...)
		b = strconv.AppendInt(b, e.OutputTokens, 10)
	}
	b = appendEgress(b, e)
	b = appendStrings(b, `,"arg_findings":[`, e.ArgFindings)
	b = appendStrings(b, `,"capabilities":[`, e.Capabilities)
	if s := e.Spent; s != nil {
		b = append(b, `,"spent":{"calls":`...)
		b = strconv.AppendInt(b, s.Calls, 10)
		b = strconv.AppendInt(append(b, `,"bytes_in":`...), s.BytesIn, 10)
		b = strconv.AppendInt(append(b, `,"bytes_out":`...), s.BytesOut, 10)
		b = strconv.AppendInt(append(b, `,"budget":`...), s.Budget, 10)
		b = append(b, '}')
	}
	return append(b, '}'), at
}

// appendEgress appends the call ID and an egress line's fields.
func appendEgress(b []byte, e *Entry) []byte {
	b = appendOmitempty(b, `,"call":`, e.Call)
	b = appendOmitempty(b, `,"host":`, e.Host)
	if e.Port != 0 {
		b = append(b, `,"port":`...)
		b = strconv.AppendInt(b, int64(e.Port), 10)
	}
	b = appendOmitempty(b, `,"addr":`, e.Addr)
	if e.BytesUp != 0 {
		b = append(b, `,"bytes_up":`...)
		b = strconv.AppendInt(b, e.BytesUp, 10)
	}
	if e.BytesDown != 0 {
		b = append(b, `,"bytes_down":`...)
		b = strconv.AppendInt(b, e.BytesDown, 10)
	}
	if e.CredentialInjected {
		b = append(b, `,"credential_injected":true`...)
	}
	return b
}

// appendStrings appends a list member (key ends with "["), omitted when
// empty.
func appendStrings(b []byte, key string, ss []string) []byte {
	if len(ss) == 0 {
		return b
	}
	b = append(b, key...)
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(b, s)
	}
	return append(b, ']')
}

func appendMember(b []byte, key, s string) []byte {
	return jsonenc.AppendString(append(b, key...), s)
}

func appendOmitempty(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendMember(b, key, s)
}
