package egress

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/lazyregexp"
)

// RuleDLP refuses a request that carries a secret or encoded data in
// what the proxy can read: the target and headers and body of a plain
// http request or of a request to a brokered host, and the name of every
// host a wildcard entry allows (docs/egress.md, "Data-loss checks").
const RuleDLP = "egress.dlp"

// Scanner finds secrets in text and returns the IDs of the rules that
// found them (gitleaks' rule IDs); an error means the text could not be
// scanned, and the request is refused. mcpserver wires the output
// filter's scanner (guard/outfilter).
type Scanner func(text string) ([]string, error)

// finding is a refusal by RuleDLP with what found it: a Scanner's rule
// ID or one of the proxy's own checks (the dlp* IDs). Neither it nor its
// message ever holds what was found.
type finding struct {
	*refusalError
	id string
}

func (f *finding) Unwrap() error { return f.refusalError }

// The IDs of the proxy's own checks.
const (
	dlpTooDense     = "too-dense"        // the scanner would not scan it
	dlpBodyTooLarge = "body-too-large"   // past dlp.max_body_bytes
	dlpNested       = "nested-encoding"  // percent-encoded more than maxDecode times
	dlpURLEntropy   = "url-entropy"      // a random-looking path segment or query value
	dlpEncodedRand  = "encoded-entropy"  // hex or base64 of a random-looking token
	dlpHostDepth    = "hostname-labels"  // too many labels below a wildcard's domain
	dlpHostEncoded  = "hostname-encoded" // a label of hex, base32 or random-looking data
	dlpCard         = "payment-card"     // a payment card number (Luhn-valid, known prefix)
)

func dlpRefusal(id, format string, args ...any) error {
	return &finding{refusalError: refusal(RuleDLP, format, args...).(*refusalError), id: id}
}

// findingOf is the ID of a DLP refusal, "" for any other error.
func findingOf(err error) string {
	if f, ok := errors.AsType[*finding](err); ok {
		return f.id
	}
	return ""
}

// vendorTokens are secrets known by their vendor's prefix. gitleaks'
// rules also pin the length of what follows, as a repository scanner
// must to spare people false alarms; a token cut short or padded, on its
// way out, is still the vendor's token.
// Each expression runs only on text holding one of its literal
// prefixes (strings.Contains is fast; Go's regexp is not).
var vendorTokens = []struct {
	id       string
	prefixes []string
	re       *lazyregexp.Regexp
}{
	{"github-token-prefix", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, lazyregexp.New(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`)},
	{"gitlab-token-prefix", []string{"glpat-"}, lazyregexp.New(`\bglpat-[A-Za-z0-9_-]{16,}`)},
	{"slack-token-prefix", []string{"xox"}, lazyregexp.New(`\bxox[abprs]-[A-Za-z0-9-]{10,}`)},
	{"openai-token-prefix", []string{"sk-"}, lazyregexp.New(`\bsk-(?:proj|svcacct|admin|ant)-[A-Za-z0-9_-]{20,}`)},
	{"stripe-token-prefix", []string{"k_live_", "k_test_", "k_prod_"}, lazyregexp.New(`\b[rs]k_(?:live|test|prod)_[A-Za-z0-9_]{10,}`)},
	{"sendgrid-token-prefix", []string{"SG."}, lazyregexp.New(`\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}`)},
	{"aws-access-key-prefix", []string{"AKIA", "ASIA", "ABIA", "ACCA"}, lazyregexp.New(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
}

var pctEscape = lazyregexp.New(`%[0-9A-Fa-f]{2}`)

// maxCandidates bounds the encoded runs decoded in one text.
const maxCandidates = 64

// maxDecode is how many times a target is percent-decoded; one still
// percent-encoded after that is refused (nobody legitimately encodes a
// URL four times over; evasion does).
const maxDecode = 3

// dlp is a block's checks with the proxy's scanner.
type dlp struct {
	conf configs.NetworkDLP // with defaults
	scan Scanner
}

func (d *dlp) on() bool { return d != nil && !d.conf.Off }

// secrets is the first rule that finds a secret in s: the scanner's,
// then the vendor prefixes, then payment cards.
func (d *dlp) secrets(s string) (string, error) {
	if d.scan != nil {
		ids, err := d.scan(s)
		if err != nil {
			return dlpTooDense, err
		}
		if len(ids) > 0 {
			slices.Sort(ids)
			return ids[0], nil
		}
	}
	for _, v := range vendorTokens {
		if slices.ContainsFunc(v.prefixes, func(p string) bool { return strings.Contains(s, p) }) && v.re.MatchString(s) {
			return v.id, nil
		}
	}
	for _, m := range runs(s, isCardByte, 13) {
		if cardNumber(m) {
			return dlpCard, nil
		}
	}
	return "", nil
}

// text checks s and the data encoded in it (hex and base64 runs that
// decode to text, or to a random-looking token); how says in what
// encoding the finding was, "" when as sent.
func (d *dlp) text(s string) (id, how string, err error) {
	if id, err := d.secrets(s); id != "" || err != nil {
		return id, "", err
	}
	for _, m := range runs(s, isBase64Byte, 16) {
		if b, ok := decodeBase64(m); ok {
			if id, how, err := d.decoded(b, "base64"); id != "" || err != nil {
				return id, how, err
			}
		}
	}
	for _, m := range runs(s, isHexByte, 24) {
		digits := strings.Map(func(r rune) rune {
			if strings.ContainsRune("-:. ", r) {
				return -1
			}
			return r
		}, m)
		if len(digits) < 24 {
			continue
		}
		if b, err := hex.DecodeString(digits[:len(digits)&^1]); err == nil {
			if id, how, err := d.decoded(b, "hex"); id != "" || err != nil {
				return id, how, err
			}
		}
	}
	return "", "", nil
}

// decoded checks decoded data: its printable runs are scanned, and one
// that is a long random-looking token (a key, not words) is refused.
func (d *dlp) decoded(b []byte, how string) (string, string, error) {
	runs := printableRuns(b, 8)
	if len(runs) == 0 {
		return "", "", nil
	}
	if id, err := d.secrets(strings.Join(runs, "\n")); id != "" || err != nil {
		return id, how, err
	}
	for _, r := range runs {
		for _, tok := range strings.FieldsFunc(r, func(c rune) bool { return unicode.IsSpace(c) || strings.ContainsRune(`"',;=:`, c) }) {
			if randomToken(tok, 20, 4.2) {
				return dlpEncodedRand, how, nil
			}
		}
	}
	return "", "", nil
}

// target checks a request target (an absolute http:// URI or a path and
// query): as sent and percent-decoded up to maxDecode times, and its
// segments and values for random-looking data.
func (d *dlp) target(uri string) error {
	if rest, ok := strings.CutPrefix(uri, "http://"); ok {
		if i := strings.IndexAny(rest, "/?"); i >= 0 {
			uri = rest[i:]
		} else {
			uri = ""
		}
	}
	view := uri
	for layer := 0; ; layer++ {
		id, how, err := d.text(view)
		if id != "" || err != nil {
			return dlpRefusal(id, "the request target carries %s%s (%s)", what(id), encodedAs(how, layer), id)
		}
		if d.conf.URLEntropy > 0 {
			for _, seg := range strings.FieldsFunc(view, func(c rune) bool { return strings.ContainsRune("/?&=;,+# ", c) }) {
				if randomToken(seg, 24, d.conf.URLEntropy) {
					return dlpRefusal(dlpURLEntropy, "the request target carries a random-looking segment of %d characters, as an encoded secret would be (%s)", len(seg), dlpURLEntropy)
				}
			}
		}
		if !pctEscape.MatchString(view) {
			return nil
		}
		if layer == maxDecode {
			return dlpRefusal(dlpNested, "the request target is percent-encoded more than %d times over (%s)", maxDecode, dlpNested)
		}
		view = percentDecode(view)
	}
}

// header checks the request's headers, each as "Name: value" so that a
// rule keyed on a name (X-Api-Key) sees it. It runs before a credential
// is put in: the placeholder is no finding, and the value never scanned.
func (d *dlp) header(h http.Header) error {
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range h {
			if !yield(k) {
				return
			}
		}
	}) {
		for _, v := range h[name] {
			id, how, err := d.text(name + ": " + v)
			if id != "" || err != nil {
				return dlpRefusal(id, "the %s header carries %s%s (%s)", name, what(id), encodedAs(how, 0), id)
			}
		}
	}
	return nil
}

func what(id string) string {
	switch id {
	case dlpTooDense:
		return "too many secret-like candidates to scan"
	case dlpEncodedRand:
		return "a random-looking token"
	case dlpCard:
		return "a payment card number"
	}
	return "a secret"
}

func encodedAs(how string, layers int) string {
	switch {
	case how != "" && layers > 0:
		return ", " + how + "-encoded after percent-decoding"
	case how != "":
		return ", " + how + "-encoded"
	case layers > 0:
		return ", percent-encoded"
	}
	return ""
}

// hostname checks the labels of host below base, the domain of the
// wildcard entry that allows it.
func (d *dlp) hostname(host, base string) error {
	below := strings.TrimSuffix(host, "."+base)
	labels := strings.Split(below, ".")
	if n := d.conf.Hostnames.MaxLabels; len(labels) > n {
		return dlpRefusal(dlpHostDepth, "%s has %d labels below *.%s, more than %d (dlp.hostnames.max_labels): names like it carry data out in the lookup itself (%s)",
			host, len(labels), base, n, dlpHostDepth)
	}
	for _, l := range labels {
		if why := encodedLabel(l, d.conf.Hostnames.Entropy); why != "" {
			return dlpRefusal(dlpHostEncoded, "the label %q of %s below *.%s looks like %s, not a name (%s)", truncLabel(l), host, base, why, dlpHostEncoded)
		}
	}
	return nil
}

func truncLabel(l string) string {
	if len(l) > 12 {
		return l[:12] + "..."
	}
	return l
}

// encodedLabel says what data a (lower-case) label looks like, "" when
// it looks like a name.
func encodedLabel(l string, entropy float64) string {
	isHex := strings.Trim(l, "0123456789abcdef") == ""
	switch {
	case isHex && len(l) >= 16:
		return "hex-encoded data"
	case isHex && len(l) >= 8 && len(l)%2 == 0 && hexText(l):
		return "hex-encoded text"
	case len(l) >= 16 && strings.Trim(l, "abcdefghijklmnopqrstuvwxyz234567") == "" && strings.ContainsAny(l, "234567"):
		return "base32-encoded data"
	case entropy > 0 && len(l) >= 20 && strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789") == "" &&
		strings.ContainsAny(l, "0123456789") && strings.Trim(l, "0123456789") != "" && shannon(l) >= entropy:
		return "random data"
	}
	return ""
}

// hexText: the hex decodes to printable ASCII (a word, not a hash).
func hexText(l string) bool {
	b, err := hex.DecodeString(l)
	if err != nil {
		return false
	}
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// wildcardBase is the domain of the longest wildcard entry allowing
// host:port, "" when an exact entry allows it (or none does).
func (p *Policy) wildcardBase(host string, port uint16) string {
	base := ""
	for _, a := range p.allows {
		if !a.Match(host, port) {
			continue
		}
		if !a.Wildcard {
			return ""
		}
		if len(a.Host) > len(base) {
			base = a.Host
		}
	}
	return base
}

// randomToken: at least min characters mixing upper case, lower case and
// digits, at least bits of entropy per character: a key, not a word.
func randomToken(s string, min int, bits float64) bool {
	if len(s) < min {
		return false
	}
	var up, low, dig bool
	for _, c := range s {
		switch {
		case c >= 'A' && c <= 'Z':
			up = true
		case c >= 'a' && c <= 'z':
			low = true
		case c >= '0' && c <= '9':
			dig = true
		}
	}
	return up && low && dig && shannon(s) >= bits
}

// shannon is the entropy of s in bits per byte.
func shannon(s string) float64 {
	var n [256]int
	for i := 0; i < len(s); i++ {
		n[s[i]]++
	}
	var h float64
	for _, c := range n {
		if c > 0 {
			p := float64(c) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}

// decodeBase64 decodes a run in any of the four alphabets and paddings.
func decodeBase64(s string) ([]byte, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

// printableRuns are the runs of at least min printable characters of
// b (valid UTF-8, no control characters but tab).
func printableRuns(b []byte, min int) []string {
	var runs []string
	start, count := -1, 0
	flush := func(end int) {
		if start >= 0 && count >= min {
			runs = append(runs, string(b[start:end]))
		}
		start, count = -1, 0
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 || r < 0x20 && r != '\t' || r == 0x7f {
			flush(i)
			i++
			continue
		}
		if start < 0 {
			start = i
		}
		count++
		i += n
	}
	flush(len(b))
	return runs
}

// percentDecode decodes every valid %XX of s, and "+" as a space.
func percentDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v, _ := hex.DecodeString(s[i+1 : i+3])
			b.WriteByte(v[0])
			i += 2
		case s[i] == '+':
			b.WriteByte(' ')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// cardNumber: 13 to 19 digits (spaces or dashes between), an issuer's
// prefix (Visa, Mastercard, American Express, Discover), and the Luhn
// check digit right.
func cardNumber(s string) bool {
	d := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
	if len(d) < 13 || len(d) > 19 {
		return false
	}
	switch {
	case d[0] == '4', d[0] == '5' && d[1] >= '1' && d[1] <= '5', d[:2] == "34", d[:2] == "37",
		d[:4] == "6011", d[:2] == "65", d[:4] >= "2221" && d[:4] <= "2720":
	default:
		return false
	}
	sum := 0
	for i := range len(d) {
		v := int(d[len(d)-1-i] - '0')
		if i%2 == 1 {
			if v *= 2; v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

// Body windows: each is checked with the last dlpOverlap bytes of the one
// before, which are held back until then, so that no byte of a secret up
// to dlpOverlap long is passed on before the window holding it whole is
// checked.
const (
	dlpWindow  = 64 << 10
	dlpOverlap = 4 << 10
)

// dlpBody passes a request body on as it checks it; it fails with the
// finding (and holds tripped) at the first, or once more than the
// block's dlp.max_body_bytes were read.
type dlpBody struct {
	r       io.Reader
	d       *dlp
	read    int64
	chunk   []byte
	pending []byte // read, not yet checked with what follows
	out     []byte // checked, not yet returned
	err     error
	hit     error
	tripped bool
}

func newDLPBody(r io.Reader, d *dlp) *dlpBody {
	return &dlpBody{r: r, d: d, chunk: make([]byte, dlpWindow)}
}

func (b *dlpBody) Read(p []byte) (int, error) {
	for len(b.out) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		n, err := io.ReadFull(b.r, b.chunk)
		if err == io.ErrUnexpectedEOF {
			err = io.EOF
		}
		b.read += int64(n)
		if b.read > b.d.conf.MaxBodyBytes {
			return 0, b.trip(dlpRefusal(dlpBodyTooLarge, "the request body is longer than the %d bytes the proxy scans (dlp.max_body_bytes); it was not sent on (%s)", b.d.conf.MaxBodyBytes, dlpBodyTooLarge))
		}
		b.pending = append(b.pending, b.chunk[:n]...)
		if n > 0 {
			if id, how, serr := b.d.text(string(b.pending)); id != "" || serr != nil {
				return 0, b.trip(dlpRefusal(id, "the request body carries %s%s (%s)", what(id), encodedAs(how, 0), id))
			}
		}
		switch cut := len(b.pending) - dlpOverlap; {
		case err != nil:
			b.out, b.pending, b.err = b.pending, nil, err
		case cut > 0:
			b.out = append([]byte(nil), b.pending[:cut]...)
			b.pending = append(b.pending[:0], b.pending[cut:]...)
		}
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

func (b *dlpBody) trip(err error) error {
	b.tripped, b.hit, b.err, b.pending = true, err, err, nil
	return err
}

func (b *dlpBody) Close() error {
	if c, ok := b.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// checkDLP checks a request's target and headers, as the sandbox sent
// them.
func (c *Call) checkDLP(req *http.Request) error {
	if !c.dlp.on() {
		return nil
	}
	if err := c.dlp.target(req.RequestURI); err != nil {
		return err
	}
	return c.dlp.header(req.Header)
}

// tripped is the refusal of whichever body check tripped, nil if none.
func tripped(g *guard, b *dlpBody) error {
	switch {
	case g.tripped:
		return g.hit
	case b != nil && b.tripped:
		return b.hit
	}
	return nil
}

// carry keeps from's finding on to, the refusal that reports it again.
func carry(from, to error) error {
	if id := findingOf(from); id != "" {
		if r, ok := to.(*refusalError); ok {
			return &finding{refusalError: r, id: id}
		}
	}
	return to
}

// runs are the maximal runs of s's bytes in a class, at least min long
// (not counting separators at their ends), at most maxCandidates of them;
// a base64 run takes up to two "=" after it.
func runs(s string, in func(byte) bool, min int) []string {
	var out []string
	for i := 0; i < len(s) && len(out) < maxCandidates; {
		if !in(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && in(s[j]) {
			j++
		}
		if r := strings.Trim(s[i:j], "-:. "); len(r) >= min {
			if in('A') { // base64: with its padding
				for k := j; k < len(s) && k < j+2 && s[k] == '='; k++ {
					j = k + 1
				}
			}
			out = append(out, s[i:j])
		}
		i = j
	}
	return out
}

// isBase64Byte: either alphabet (the padding is taken by runs).
func isBase64Byte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '_' || c == '-'
}

// isHexByte: hex digits and the separators of delimited hex.
func isHexByte(c byte) bool { return isHex(c) || c == '-' || c == ':' || c == '.' || c == ' ' }

// isCardByte: digits and the separators of a written card number.
func isCardByte(c byte) bool { return c >= '0' && c <= '9' || c == ' ' || c == '-' }
