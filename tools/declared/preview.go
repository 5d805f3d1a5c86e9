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

	"github.com/toolwarden/toolwarden/configs"
)

// preview is what the human approves for an http tool: the method, the
// exact URL and JSON body the request will carry (built by request, as the
// call builds them), and the headers, where a credential shows as the name
// of the variable, file or Vault secret it comes from, never its value.
func (ht *httpTool) preview(ctx context.Context, vals map[string]value) (string, error) {
	// A call that would fail is refused without asking; the values read
	// are dropped here.
	if _, err := ht.credentials(ctx); err != nil {
		return "", err
	}
	req, err := ht.request(ctx, vals, ht.headers)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Send declared tool %s's request:\n%s %s\n", ht.t.Name, req.Method, req.URL.String())
	for _, sh := range ht.secret {
		fmt.Fprintf(&b, "%s: [secret from %s, not shown]\n", http.CanonicalHeaderKey(sh.name), source(sh.ref))
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

// source says where a credential is read from, for the approval prompt:
// $VAR, the file, or the Vault secret.
func source(r configs.SecretRef) string {
	switch {
	case r.File != "":
		return "file " + r.File
	case r.Vault != "":
		return "Vault " + r.Vault
	}
	return "$" + r.Env
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
