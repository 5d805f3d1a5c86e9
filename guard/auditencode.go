package guard

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
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
	b = appendFloat(b, e.DurationMS)
	b = appendMember(b, `,"prev":`, e.Prev)
	b = append(b, `,"hash":`...)
	at := len(b) + 1
	b = appendString(b, e.Hash)
	if len(e.DroppedArgs) > 0 {
		b = append(b, `,"dropped_args":[`...)
		for i, s := range e.DroppedArgs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, s)
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
	return append(b, '}'), at
}

func appendMember(b []byte, key, s string) []byte {
	return appendString(append(b, key...), s)
}

func appendOmitempty(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendMember(b, key, s)
}

// appendString appends s as a JSON string. Plain ASCII, what nearly every
// value is (digests, names, times), is copied; anything else goes through
// encoding/json, whose escaping (HTML characters, U+2028, invalid UTF-8)
// the hash depends on.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendFloat formats f as encoding/json does (ES6 number formatting). A
// NaN or an infinity, which json.Marshal refuses, cannot come from a
// duration; it is written as 0 rather than failing the call's audit.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, '0')
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		if n := len(b) - start; n >= 4 && b[len(b)-4] == 'e' && b[len(b)-3] == '-' && b[len(b)-2] == '0' {
			b[len(b)-2] = b[len(b)-1]
			b = b[:len(b)-1]
		}
	}
	return b
}
