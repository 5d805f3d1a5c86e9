package page

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/toolwarden/toolwarden/approvals"
)

// maxFormBytes bounds a decision's form: an ID, a digest, a token.
const maxFormBytes = 4 << 10

// decide takes a decision from the page's own form. It refuses, deciding
// nothing, a request from another origin, one without the token of this
// session for this very call, and one for a call that no longer waits.
func (p *Page) decide(w http.ResponseWriter, r *http.Request, s session) {
	if r.Header.Get("Origin") != p.origin {
		http.Error(w, "refused: the decision did not come from the approval page's own origin", http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "refused: bad form", http.StatusBadRequest)
		return
	}
	f, err := decisionForm(r.PostForm)
	if err != nil {
		http.Error(w, "refused, nothing decided: "+err.Error(), http.StatusBadRequest)
		return
	}
	id, digest, action := f["id"], f["digest"], f["action"]
	if !s.sees(id) || !p.auth.checkToken(s.id, id, digest, f["csrf"]) {
		http.Error(w, "refused: the CSRF token is not this page's for this call", http.StatusForbidden)
		return
	}
	if action != "approve" && action != "deny" {
		http.Error(w, "refused: action must be approve or deny", http.StatusBadRequest)
		return
	}
	d := approvals.Decision{Approve: action == "approve", Channel: "page", By: "page"}
	if !d.Approve {
		d.Reason = "denied on the approval page"
	}
	err = p.hub.Decide(id, digest, d)
	switch {
	case errors.Is(err, approvals.ErrUnknown), errors.Is(err, approvals.ErrExpired), errors.Is(err, approvals.ErrDecided):
		http.Error(w, "refused, nothing decided: "+err.Error(), http.StatusConflict)
	case err != nil:
		http.Error(w, "refused: "+err.Error(), http.StatusConflict)
	case d.Approve:
		http.Redirect(w, r, s.base+"?m=approved", http.StatusSeeOther)
	default:
		http.Redirect(w, r, s.base+"?m=denied", http.StatusSeeOther)
	}
}

// decisionFields are the fields of the page's decision form.
var decisionFields = []string{"id", "digest", "action", "csrf"}

// decisionForm reads the decision form as strictly as the webhook's
// signed JSON body: each field exactly once and no other field. Go's
// PostForm.Get takes the first of repeated fields, where another reader
// (a proxy, a log) may take the last: action=deny&action=approve must
// mean one thing or nothing.
func decisionForm(form url.Values) (map[string]string, error) {
	out := make(map[string]string, len(decisionFields))
	for name, values := range form {
		switch {
		case !slices.Contains(decisionFields, name):
			return nil, fmt.Errorf("unknown field %q (the form has %s)", name, strings.Join(decisionFields, ", "))
		case len(values) != 1:
			return nil, fmt.Errorf("field %q is given %d times (once only)", name, len(values))
		}
		out[name] = values[0]
	}
	return out, nil
}
