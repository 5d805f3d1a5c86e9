package outfilter

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
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
	f.Add("\x1b[2J\x1b]8;;https://e.example/\x07link\x1b]8;;\x1b\\ \u009b1m \x00")
	f.Add("![a [b]](https://e.example/?d=1) ![r]\n[r]: //e.example/x\n\\![c](x:y)")
	f.Add("a" + strings.Repeat(" ", 250) + "b" + strings.Repeat("\r\n", 30) + "\u3000\u2028c")
	f.Add("call the `update_task_status` tool; {\"method\":\"tools/call\"}")
	f.Add("run update_task; use **udpate-task-status**; call UpdateTaskStatus; invoke task_status_")
	flt, err := New(Options{Redact: true, StripInvisible: true, ToolNames: []string{"update_task_status"}})
	if err != nil {
		f.Fatal(err)
	}
	if err := flt.wait(); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var rep Report
		out := flt.Text(s, &rep)
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("valid input became invalid UTF-8: %q -> %q", s, out)
		}
		var again Report
		if flt.Text(out, &again); again.Stripped != 0 || again.Controls != 0 {
			t.Fatalf("stripping left invisible or control characters in %q", out)
		}
		if again.Defanged != 0 || again.Collapsed != 0 {
			t.Fatalf("defanging or collapsing is not idempotent on %q: %+v", out, again)
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

// FuzzBase64: base64 of any text comes out as base64 in the encoding it
// was read in, of valid UTF-8 when the text was. (Base64 with neither
// alphabet's own bytes, a length a multiple of 4 and no padding is read
// as the standard padded form whatever wrote it.)
func FuzzBase64(f *testing.F) {
	for _, s := range fakesecret.All(52) {
		f.Add(s.Line)
	}
	f.Add("zero\u200bwidth space in a text long enough")
	f.Add("caf\xe9\n\x1b]8;;https://e.example/\x07link\x1b]8;;\x07\x1b[2J\x1b[H\x1b[1A\x1b[2K")
	flt := newFilter(f)
	f.Fuzz(func(t *testing.T, text string) {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			in := enc.EncodeToString([]byte(text))
			out := flt.inBase64(in, &Report{})
			if out == in {
				continue
			}
			b, err := encodingOf(in).DecodeString(out)
			if err != nil {
				t.Fatalf("%q: %s became %s, not in the same encoding: %v", text, in, out, err)
			}
			if utf8.ValidString(text) && !utf8.Valid(b) {
				t.Fatalf("%q became invalid UTF-8: %q", text, b)
			}
		}
	})
}

// FuzzScanMissesNothing: the keyword windows and the anchored forms
// (literalForm, semiGenericForm and the generic rule's) find every secret
// that the rules, run plainly over the whole text, find.
func FuzzScanMissesNothing(f *testing.F) {
	for _, s := range fakesecret.All(53) {
		f.Add(s.Line)
	}
	f.Add("jfrog.artifactory_xray-key = \"" + strings.Repeat("a1", 40) + "\"\n")
	f.Add(strings.Repeat("x.", 40) + "SUMO_ID: su" + strings.Repeat("Z9", 6) + ";")
	f.Add("linked-in client " + strings.Repeat("0", 14) + " linkedin_secret => " + strings.Repeat("f", 16))
	flt := newFilter(f)
	f.Fuzz(func(t *testing.T, s string) {
		var rep Report
		got := flt.scan(s, 0, len(s), &rep)
		if rep.checks > MaxChecks {
			return
		}
		key := func(sp span) string { return sp.rule + ":" + s[sp.start:sp.end] }
		found := dedupe(got, key)
		for _, want := range dedupe(plainSpans(flt, s), key) {
			if !slices.Contains(found, want) {
				t.Fatalf("missed %q in %q", want, s)
			}
		}
	})
}
