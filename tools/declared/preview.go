package declared

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// preview is what the human approves for an http tool: the method, the
// exact URL and JSON body the request will carry (built by request, as the
// call builds them), and the headers, where a credential shows as the name
// of the variable it comes from, never its value.
func (ht *httpTool) preview(ctx context.Context, vals map[string]value) (string, error) {
	if err := ht.credentials(); err != nil {
		return "", err
	}
	req, err := ht.request(ctx, vals)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Send declared tool %s's request:\n%s %s\n", ht.t.Name, req.Method, req.URL.String())
	for _, h := range ht.secretHeaders() {
		fmt.Fprintf(&b, "%s: [secret from $%s, not shown]\n", h[0], h[1])
	}
	if req.Body == nil {
		b.WriteString("No body.")
		return b.String(), nil
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "Content-Type: %s\nBody: %s", req.Header.Get("Content-Type"), escapeJSON(string(body)))
	return b.String(), nil
}

// secretHeaders names each header that carries a credential and the
// environment variable it is read from.
func (ht *httpTool) secretHeaders() [][2]string {
	var out [][2]string
	if t := ht.t; t.APIKeyEnv != "" {
		name := t.APIKeyHeader
		if name == "" || strings.EqualFold(name, "Authorization") {
			name = "Authorization"
		}
		out = append(out, [2]string{http.CanonicalHeaderKey(name), t.APIKeyEnv})
	}
	for _, he := range ht.t.HeaderEnv {
		out = append(out, [2]string{http.CanonicalHeaderKey(he.Name), he.Env})
	}
	return out
}

// escapeJSON writes the characters of a JSON text that are not printable
// (json.Marshal leaves direction overrides and other invisible ones as
// they are) as \u escapes: the same JSON value, which cannot reorder or
// hide part of the approval prompt. Outside strings JSON has no such
// characters, so only strings change.
func escapeJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsPrint(r) || r == utf8.RuneError {
			b.WriteRune(r)
			continue
		}
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		} else {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}
