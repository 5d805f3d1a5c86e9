package outfilter

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// JSON filters every string value in a JSON document and returns the
// document re-encoded when something changed, else raw itself. A string
// member is scanned as `"name": "value"`, so that rules keyed on the name
// (api_key, password, ...) see it; only the value is ever changed. A
// string that is base64 of text is decoded and its text filtered too (see
// inBase64). A document that does not decode is an error: it is never
// passed through unscanned.
func (f *Filter) JSON(raw []byte, rep *Report) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("structured content is not JSON: %w", err)
	}
	before := *rep
	v = f.value("", v, rep)
	if rep.changes() == before.changes() {
		return raw, nil
	}
	return json.Marshal(v)
}

// value filters v, a member of name ("" for array items and the root).
func (f *Filter) value(name string, v any, rep *Report) any {
	switch x := v.(type) {
	case string:
		return f.member(name, x, rep)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			// Names are filtered too: a map keyed by tokens is no hiding place.
			out[f.member("", k, rep)] = f.value(k, e, rep)
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = f.value("", e, rep)
		}
	}
	return v
}

func (f *Filter) member(name, s string, rep *Report) string {
	s = f.strip(s, rep)
	// What a base64 string encodes is filtered first, so that the scan
	// below, which may catch the string by its name, sees what is left.
	s = f.inBase64(s, rep)
	if name == "" {
		return f.neutralise(redact(s, f.scan(s, 0, len(s), rep), 0, rep), rep)
	}
	prefix := `"` + name + `": "`
	doc := prefix + s + `"`
	return f.neutralise(redact(s, f.scan(doc, len(prefix), len(prefix)+len(s), rep), len(prefix), rep), rep)
}
