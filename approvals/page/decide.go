package page

import (
	"errors"
	"net/http"

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
	id, digest, action := r.PostForm.Get("id"), r.PostForm.Get("digest"), r.PostForm.Get("action")
	if !s.sees(id) || !p.auth.checkToken(s.id, id, digest, r.PostForm.Get("csrf")) {
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
	err := p.hub.Decide(id, digest, d)
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
