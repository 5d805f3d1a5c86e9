package page

import (
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/approvals"
)

// headBytes is how much of an action a card shows unfolded; the rest is
// folded under "show the remaining bytes", so a 1 MiB write neither hides
// the other calls nor is approved unseen by accident of scrolling.
const headBytes = 8 << 10

// card is one waiting call as the page shows it. Every field is text: the
// template and the script escape it, never parse it.
type card struct {
	ID       string `json:"id"`
	Tool     string `json:"tool"`
	Digest   string `json:"digest"`
	Identity string `json:"identity"`
	Session  string `json:"session"`
	Head     string `json:"head"`
	Rest     string `json:"rest"`
	// Total is the action's length in bytes.
	Total int `json:"total"`
	// Expires is when the request expires, in Unix milliseconds and in
	// words (for a page without script).
	Expires     int64  `json:"expires"`
	ExpiresText string `json:"expires_text"`
	Token       string `json:"token"`
}

func (p *Page) card(r approvals.Request, s session) card {
	head, rest := split(r.Preview, headBytes)
	identity := r.Identity
	if identity == "" {
		identity = "(local)"
	}
	return card{ID: r.ID, Tool: r.Tool, Digest: r.Digest, Identity: identity, Session: r.Session,
		Head: head, Rest: rest, Total: len(r.Preview), Expires: r.Expires.UnixMilli(),
		ExpiresText: r.Expires.Format(time.TimeOnly), Token: p.auth.token(s.id, r.ID, r.Digest)}
}

// split cuts s after at most n bytes, at a rune boundary.
func split(s string, n int) (head, rest string) {
	if len(s) <= n {
		return s, ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], s[n:]
}

// view is what index.html renders.
type view struct {
	Cards   []card
	Message string
}

func (p *Page) index(w http.ResponseWriter, r *http.Request, s session) {
	v := view{Message: messages[r.URL.Query().Get("m")]}
	for _, req := range p.hub.List() {
		if s.sees(req.ID) {
			v.Cards = append(v.Cards, p.card(req, s))
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b strings.Builder
	if err := pageTemplate.Execute(&b, v); err != nil {
		http.Error(w, "approval page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	_, _ = w.Write([]byte(b.String()))
}

// messages are the notes a decision leaves for the page it returns to.
var messages = map[string]string{
	"approved": "Approved: the call runs.",
	"denied":   "Denied: the call was refused.",
}
