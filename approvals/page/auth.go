package page

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"sync"

	"github.com/toolwarden/toolwarden/approvals"
)

// sessionCookie holds the browser's session, given for the one-time secret.
const sessionCookie = "toolwarden_approval"

// auth holds the one-time secret of the printed URL, the sessions it
// opened, and the key CSRF tokens are signed with.
type auth struct {
	secret string
	key    []byte

	mu   sync.Mutex
	used bool
	// sessions maps each session to its scope: "" sees every call, an
	// approval ID only that call (a session opened by a per-call link).
	sessions map[string]string
	// usedLinks are the per-call links already opened.
	usedLinks map[string]bool
}

func newAuth() *auth {
	return &auth{secret: random(), key: []byte(random()), sessions: map[string]string{}, usedLinks: map[string]bool{}}
}

func random() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// exchange trades the one-time secret for a new session; the secret works
// once, so a URL seen later (shell history, a screenshot) opens nothing.
func (a *auth) exchange(secret string) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.used || subtle.ConstantTimeCompare([]byte(secret), []byte(a.secret)) != 1 {
		return "", false
	}
	a.used = true
	s := random()
	a.sessions[s] = ""
	return s, true
}

// exchangeLink trades a per-call link, once, for a session that sees
// only that call.
func (a *auth) exchangeLink(id, digest, token string) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.usedLinks[token] || !hmac.Equal([]byte(token), []byte(a.mac("link", id, digest))) {
		return "", false
	}
	a.usedLinks[token] = true
	s := random()
	a.sessions[s] = id
	return s, true
}

// scope returns a session's scope, and whether the session exists.
func (a *auth) scope(session string) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	scope, ok := a.sessions[session]
	return scope, ok
}

// token is the CSRF token of one decision: bound to the session, the
// approval ID and the argument digest, so it can decide nothing else.
func (a *auth) token(session, id, digest string) string { return a.mac("csrf", session, id, digest) }

// mac signs parts under a purpose, so a token of one purpose is never
// valid as another.
func (a *auth) mac(purpose string, parts ...string) string {
	m := hmac.New(sha256.New, a.key)
	m.Write([]byte("toolwarden approval page v1\x00" + purpose))
	for _, p := range parts {
		m.Write([]byte("\x00" + p))
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (a *auth) checkToken(session, id, digest, token string) bool {
	return hmac.Equal([]byte(token), []byte(a.token(session, id, digest)))
}

// login exchanges the URL's secret for a session cookie and sends the
// browser to the page, dropping the secret from its address bar.
func (p *Page) login(w http.ResponseWriter, r *http.Request) {
	s, ok := p.auth.exchange(r.URL.Query().Get("secret"))
	if !ok {
		http.Error(w, "this approval link is not valid or was already used; restart toolwarden serve for a new one", http.StatusForbidden)
		return
	}
	startSession(w, r, p.auth.base(s), s)
}

// callLink is the URL that opens the page for one call only, once: what
// URL-mode elicitation sends the client. "" until the page listens.
func (p *Page) callLink(r approvals.Request) string {
	if p.origin == "" {
		return ""
	}
	q := url.Values{"id": {r.ID}, "d": {r.Digest}, "t": {p.auth.mac("link", r.ID, r.Digest)}}
	return p.origin + pathCall + "?" + q.Encode()
}

// call trades a per-call link for a session that sees only that call.
func (p *Page) call(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s, ok := p.auth.exchangeLink(q.Get("id"), q.Get("d"), q.Get("t"))
	if !ok {
		http.Error(w, "this approval link is not valid or was already used", http.StatusForbidden)
		return
	}
	startSession(w, r, p.auth.base(s), s)
}

// startSession gives the browser the session's cookie and sends it to
// the session's own path.
//
// Browsers do not scope cookies by port: a cookie of 127.0.0.1 goes to
// every listener on 127.0.0.1 the browser visits (a dev server, another
// account's process), which could replay it to the page outside any
// browser, where Origin and CSRF checks stop nothing (issue 41). So the
// cookie is scoped by path instead: the page of a session lives under
// /s/KEY/, KEY an HMAC of the session that no other listener knows, and
// the cookie's Path is that prefix, so the browser sends it to no other
// path, on any port. (Another name for the cookie would not help: the
// other listener receives name and value. A token in sessionStorage and a
// header would, but then the page needs script and its event stream,
// which cannot send headers, a token in the URL.) Each session has its own
// KEY, so the holder of a per-call link learns no other session's path.
func startSession(w http.ResponseWriter, r *http.Request, base, s string) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s, Path: base, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, base, http.StatusSeeOther)
}

// pathKey is the KEY of a session's path /s/KEY/.
func (a *auth) pathKey(session string) string { return a.mac("path", session) }

// base is the path a session's page lives under.
func (a *auth) base(session string) string { return pathSession + a.pathKey(session) + "/" }

// session is a browser's session: its cookie value, its scope ("" for
// every call, else the one approval ID it may see and decide) and the
// path its page lives under.
type session struct{ id, scope, base string }

// sees reports whether the session may see and decide the call id.
func (s session) sees(id string) bool { return s.scope == "" || s.scope == id }

type sessionHandler func(w http.ResponseWriter, r *http.Request, s session)

// session lets through only requests with a session cookie, under that
// session's own path.
func (p *Page) session(h sessionHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(sessionCookie)
		if err != nil {
			noSession(w, r)
			return
		}
		scope, ok := p.auth.scope(c.Value)
		if !ok || !hmac.Equal([]byte(r.PathValue("key")), []byte(p.auth.pathKey(c.Value))) {
			noSession(w, r)
			return
		}
		h(w, r, session{id: c.Value, scope: scope, base: p.auth.base(c.Value)})
	}
}

func noSession(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, "no approval session: open the URL toolwarden serve printed", http.StatusForbidden)
}
