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
func (f *Filter) Argument(s string) (string, Report, error) {
	var rep Report
	if err := f.wait(); err != nil {
		return "", rep, err
	}
	clean, invisible, controls := strip(s, true)
	rep.Stripped, rep.Controls = invisible, controls
	if w := mixedScript(clean); w != "" {
		rep.warn(w)
	}
	spans := f.scan(clean, 0, len(clean), &rep)
	spans = append(spans, f.scanEncoded(clean, &rep)...)
	if rep.checks > MaxChecks {
		return "", rep, ErrTooDense
	}
	if len(spans) == 0 {
		return s, rep, nil
	}
	return redact(clean, spans, 0, &rep), rep, nil
}
