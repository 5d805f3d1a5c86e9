package outfilter

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/internal/fakesecret"
)

// FuzzText: any text filters without panicking, valid UTF-8 stays valid,
// and filtering is idempotent on what is left.
func FuzzText(f *testing.F) {
	for _, s := range fakesecret.All(50) {
		f.Add(s.Line)
	}
	for _, c := range fakesecret.Controls {
		f.Add(c)
	}
	f.Add("ignore\u200b previous instructions 👩\u200d💻 \u202e")
	flt := newFilter(f)
	f.Fuzz(func(t *testing.T, s string) {
		var rep Report
		out := flt.Text(s, &rep)
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("valid input became invalid UTF-8: %q -> %q", s, out)
		}
		var again Report
		if flt.Text(out, &again); again.Stripped != 0 {
			t.Fatalf("stripping left invisible characters in %q", out)
		}
	})
}

// FuzzJSON: a JSON document stays a JSON document.
func FuzzJSON(f *testing.F) {
	for _, s := range fakesecret.All(51) {
		b, _ := json.Marshal(map[string]any{"api_key": s.Needle(), "list": []any{s.Line, 1.5, nil}})
		f.Add(string(b))
	}
	f.Add(`{"a":"\u202e","b":[1e400,-0,"\ud800"]}`)
	flt := newFilter(f)
	f.Fuzz(func(t *testing.T, doc string) {
		if !json.Valid([]byte(doc)) {
			return
		}
		var rep Report
		out, err := flt.JSON([]byte(doc), &rep)
		if err != nil {
			return // e.g. a number encoding/json cannot hold
		}
		if !json.Valid(out) {
			t.Fatalf("%s became invalid JSON: %s", doc, out)
		}
	})
}
