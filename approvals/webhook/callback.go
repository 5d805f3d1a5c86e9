package webhook

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"unicode"

	"github.com/toolwarden/toolwarden/approvals"
	"github.com/toolwarden/toolwarden/internal/strictjson"
)

// maxCallbackBytes bounds a callback's body.
const maxCallbackBytes = 16 << 10

// maxByBytes bounds the "by" a callback may write into the audit line.
const maxByBytes = 64

// Handler takes signed decisions: it refuses, deciding nothing, an
// unsigned, wrongly signed or stale callback, and one for a call that no
// longer waits or has other arguments.
func (k *Hook) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST a signed decision", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxCallbackBytes))
		if err != nil {
			http.Error(w, "refused: body too large", http.StatusRequestEntityTooLarge)
			return
		}
		if err := verify(k.secret, r.Header, body, k.now()); err != nil {
			http.Error(w, "refused: "+err.Error(), http.StatusUnauthorized)
			return
		}
		d, err := parseDecision(body)
		if err != nil {
			http.Error(w, "refused, nothing decided: "+err.Error(), http.StatusBadRequest)
			return
		}
		by := "webhook"
		if d.By != "" {
			by += ": " + clip(d.By, maxByBytes)
		}
		dec := approvals.Decision{Approve: d.Action == "approve", Channel: "webhook", By: by, Reason: d.Reason}
		if !dec.Approve && dec.Reason == "" {
			dec.Reason = "denied through the webhook"
		}
		err = k.hub.Decide(d.ID, d.Digest, dec)
		switch {
		case errors.Is(err, approvals.ErrUnknown), errors.Is(err, approvals.ErrExpired), errors.Is(err, approvals.ErrDecided):
			http.Error(w, "refused, nothing decided: "+err.Error(), http.StatusConflict)
		case err != nil:
			http.Error(w, "refused: "+err.Error(), http.StatusConflict)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
}

// parseDecision reads a callback's body strictly: the signature proves
// who sent the bytes, not how they are read, so a body two JSON readers
// would read differently ("action" beside "Action", or twice) is
// refused rather than guessed at, and so is any member Decision lacks.
func parseDecision(body []byte) (Decision, error) {
	const want = "want {id, args_sha256, action: approve|deny, reason?, by?}"
	var d Decision
	if err := strictjson.Unmarshal(body, &d); err != nil {
		return d, fmt.Errorf("%w; %s", err, want)
	}
	if d.Action != "approve" && d.Action != "deny" {
		return d, fmt.Errorf("action %q is neither approve nor deny; %s", clip(d.Action, maxByBytes), want)
	}
	return d, nil
}

// clip keeps at most n bytes of s, at a rune boundary, printable.
func clip(s string, n int) string {
	out := make([]rune, 0, n)
	size := 0
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			r = '?'
		}
		if size += len(string(r)); size > n {
			break
		}
		out = append(out, r)
	}
	return string(out)
}
