package outfilter

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// JSON filters every string value in a JSON document and returns the
// document re-encoded when something changed, else raw itself. A string
// member is scanned as `"name": "value"`, so that rules keyed on the name
// (api_key, password, ...) see it; only the value is ever changed. Names
// are filtered too: a map keyed by tokens is no hiding place. A string that
// is base64 of text is decoded and its text filtered too (see inBase64). A
// document that does not decode, or holds more than one value, is an
// error: it is never passed through unscanned.
//
// The document is read as a token stream, so members keep their order and
// numbers their digits. The common case, nothing to change, is checked in
// place (see quietJSON) and returns raw; otherwise the strings are
// filtered one by one, and only a document with changes is read a second
// time to write the copy with the changed strings.
func (f *Filter) JSON(raw []byte, rep *Report) ([]byte, error) {
	if err := f.wait(); err != nil {
		return nil, err
	}
	if f.quietJSON(raw, rep) {
		return raw, nil
	}
	return f.fullJSON(raw, rep)
}

// fullJSON is JSON without the quiet path.
func (f *Filter) fullJSON(raw []byte, rep *Report) ([]byte, error) {
	var changed map[int]string // by the string token's ordinal; made on the first change
	err := readTokens(raw, func(i int, s, name string, isName bool) {
		if isName {
			name = ""
		}
		if out := f.member(name, s, rep); out != s {
			if changed == nil {
				changed = map[int]string{}
			}
			changed[i] = out
		}
	})
	if err != nil {
		return nil, fmt.Errorf("structured content is not JSON: %w", err)
	}
	if len(changed) == 0 {
		return raw, nil
	}
	return rewrite(raw, changed)
}

// jsonOptions accept what encoding/json accepts: a repeated name, and
// invalid UTF-8 (read as U+FFFD).
var jsonOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// readTokens reads the one JSON value in raw and calls visit for each of
// its strings, numbered in order, with the member name it is the value of
// ("" in arrays and at the root), or isName for a member name itself.
func readTokens(raw []byte, visit func(i int, s, name string, isName bool)) error {
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw), jsonOptions...)
	var objects []bool // per open container: is it an object?
	name, strings := "", 0
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		switch tok.Kind() {
		case '{', '[':
			objects = append(objects, tok.Kind() == '{')
			name = ""
		case '}', ']':
			objects = objects[:len(objects)-1]
			name = ""
		case '"':
			s := tok.String()
			_, n := dec.StackIndex(dec.StackDepth())
			isName := len(objects) > 0 && objects[len(objects)-1] && n%2 == 1
			visit(strings, s, name, isName)
			if isName {
				name = s
			}
			strings++
		}
		if len(objects) == 0 {
			return endOfInput(dec)
		}
	}
}

// rewrite copies the JSON value in raw with the strings numbered in
// changed replaced.
func rewrite(raw []byte, changed map[int]string) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw), jsonOptions...)
	var out bytes.Buffer
	out.Grow(len(raw))
	enc := jsontext.NewEncoder(&out, jsonOptions...)
	for i := 0; ; {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		if tok.Kind() == '"' {
			if s, ok := changed[i]; ok {
				tok = jsontext.String(s)
			}
			i++
		}
		if err := enc.WriteToken(tok); err != nil {
			return nil, err
		}
		if dec.StackDepth() == 0 {
			break
		}
	}
	return bytes.TrimRight(out.Bytes(), "\n"), nil
}

// endOfInput refuses anything after the document's one value.
func endOfInput(dec *jsontext.Decoder) error {
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("more than one JSON value (%v)", err)
	}
	return nil
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
