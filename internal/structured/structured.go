// Package structured carries a tool's structured output both as the Go
// value the tool made and as the JSON it encodes to, encoded once.
//
// The guard scans the JSON. When its filter changed nothing, the server
// hands mcp-go the value itself, which encoding/json writes in one pass:
// raw JSON (a json.Marshaler's output) would be re-scanned by every
// enclosing Marshal, twice more for a tools/call response.
package structured

import "encoding/json"

// Output is structured content with its JSON. JSON must be
// json.Marshal(Value) of a value no one changes afterwards: the bytes the
// guard checks are then the bytes sent.
type Output struct {
	Value any
	JSON  json.RawMessage
}

// New encodes v once.
func New(v any) (Output, error) {
	b, err := json.Marshal(v)
	return Output{Value: v, JSON: b}, err
}

// MarshalJSON writes the JSON made by New.
func (o Output) MarshalJSON() ([]byte, error) { return o.JSON, nil }

// JSON returns the JSON of structured content as a tool result holds it:
// an Output's, raw JSON as is, anything else encoded.
func JSON(content any) (json.RawMessage, error) {
	switch v := content.(type) {
	case Output:
		return v.JSON, nil
	case json.RawMessage:
		return v, nil
	}
	return json.Marshal(content)
}

// ForWire returns what to put in a result about to be encoded: an
// Output's value (the same JSON, written in one pass), anything else
// unchanged.
func ForWire(content any) any {
	if o, ok := content.(Output); ok {
		return o.Value
	}
	return content
}
