package outfilter

// Argument scans the text of one tool-call argument with the filter's
// scanners, before the call runs: the guard refuses, redacts or flags
// what it finds by its own rules (guard/argscan.go). It differs from Text
// in what it changes: nothing, unless a secret is found, and then only
// the secret (after invisible characters and control sequences are
// stripped, so that one split by a zero-width space is still seen), and
// what base64 or hex runs inside it decode to (see encoded.go).
// Markdown images and blank runs are not touched: an argument is content
// the caller wants written, not text a client renders.
//
// The report counts the redactions by rule, the invisible and control
// characters found (Stripped, Controls) and the markers and tool-call
// requests found (Warnings). The error is ErrRules when the rules could
// not be compiled, ErrTooDense when s holds too many candidates to check.
func (f *Filter) Argument(s string) (string, Report, error) { return f.ArgumentMember("", s) }

// ArgumentMember is Argument for s, the value of the object member name
// ("" for none, as in an array): like the output filter's JSON (see
// member), it scans `"name": "value"`, so that rules keyed on the name
// (client_secret, password, ...) see it, and a value that is base64 of
// text has that text scanned too, redacted and re-encoded when it holds
// a secret. Only the value is ever changed.
func (f *Filter) ArgumentMember(name, s string) (string, Report, error) {
	var rep Report
	if err := f.wait(); err != nil {
		return "", rep, err
	}
	clean, invisible, controls := strip(s, true)
	rep.Stripped, rep.Controls = invisible, controls
	if w := mixedScript(clean); w != "" {
		rep.warn(w)
	}
	if text, enc, ok := decodeText(clean); ok {
		text, _, _ = strip(text, true)
		if spans := f.scan(text, 0, len(text), &rep); len(spans) > 0 {
			clean = enc.EncodeToString([]byte(redact(text, spans, 0, &rep)))
		}
	}
	doc, lo := clean, 0
	if name != "" {
		prefix := `"` + name + `": "`
		doc, lo = prefix+clean+`"`, len(prefix)
	}
	spans := f.scan(doc, lo, lo+len(clean), &rep)
	for _, sp := range f.scanEncoded(clean, &rep) { // runs inside the text
		spans = append(spans, span{sp.start + lo, sp.end + lo, sp.rule})
	}
	if rep.checks > MaxChecks {
		return "", rep, ErrTooDense
	}
	if len(spans) == 0 && len(rep.Redactions) == 0 {
		return s, rep, nil
	}
	return redact(clean, spans, lo, &rep), rep, nil
}
