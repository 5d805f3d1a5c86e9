package outfilter

import (
	"encoding/hex"
)

// A secret base64- or hex-encoded inside an argument ("credentials:
// QUtJQ...", an echo of a hex string) leaves the caller as surely as in
// the clear, and a rule knows it only decoded. Argument therefore decodes
// every run of one encoding's alphabet inside its text, long enough to
// hold a token, that decodes to text (see decodeText and textLike: a
// digest, a UUID or random bytes decode to binary and are skipped), and
// scans that text too. What is found there is reported like what is found
// in the clear, its rule named with the encoding, and the whole run is
// redacted.

// minHex is the shortest hex run decoded: 16 bytes of text.
const minHex = 32

// encodedRun is a run of s that decodes to text.
type encodedRun struct {
	start, end int
	text, enc  string
}

// encodedRuns returns the runs of s that are base64 or hex of text.
func encodedRuns(s string) []encodedRun {
	var out []encodedRun
	for i := 0; i < len(s); {
		if base64Class[s[i]] == 0 {
			i++
			continue
		}
		j := i
		for j < len(s) && base64Class[s[j]] != 0 {
			j++
		}
		end := j
		for j < len(s) && j-end < 2 && s[j] == '=' {
			j++
		}
		if r, ok := decodeRun(s, i, end, j); ok {
			out = append(out, r)
		}
		i = j
	}
	return out
}

// decodeRun decodes s[i:end] (hex) or s[i:padded] (base64, with its
// padding) when it is long enough and decodes to text.
func decodeRun(s string, i, end, padded int) (encodedRun, bool) {
	if n := end - i; n >= minHex && n%2 == 0 && padded == end && allHex(s[i:end]) {
		b, err := hex.DecodeString(s[i:end])
		if err == nil && textLike(string(b), true) {
			return encodedRun{i, end, string(b), "hex"}, true
		}
		return encodedRun{}, false
	}
	if padded-i < minBase64 {
		return encodedRun{}, false
	}
	if text, _, ok := decodeText(s[i:padded]); ok {
		return encodedRun{i, padded, text, "base64"}, true
	}
	return encodedRun{}, false
}

func allHex(s string) bool {
	for i := range len(s) {
		c := s[i] | 0x20
		if !('0' <= s[i] && s[i] <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// scanEncoded scans the text the encoded runs of s hold, adds what it
// finds to rep and returns spans redacting each run that holds a secret.
func (f *Filter) scanEncoded(s string, rep *Report) []span {
	var spans []span
	for _, r := range encodedRuns(s) {
		var in Report
		in.checks = rep.checks
		found := f.scan(r.text, 0, len(r.text), &in)
		rep.checks = in.checks
		for _, sp := range found {
			spans = append(spans, span{r.start, r.end, sp.rule + " in " + r.enc})
		}
		for _, w := range in.Warnings {
			rep.warn(w + " (in " + r.enc + ")")
		}
		if w := mixedScript(r.text); w != "" {
			rep.warn(w + " (in " + r.enc + ")")
		}
	}
	return spans
}
