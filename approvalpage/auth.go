package approvalpage

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sync"
)

// sessionCookie holds the browser's session, given for the one-time secret.
const sessionCookie = "toolwarden_approval"

// auth holds the one-time secret of the printed URL, the sessions it
// opened, and the key CSRF tokens are signed with.
type auth struct {
	secret string
	key    []byte

	mu       sync.Mutex
	used     bool
	sessions map[string]bool
}

func newAuth() *auth {
	return &auth{secret: random(), key: []byte(random()), sessions: map[string]bool{}}
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
	a.sessions[s] = true
	return s, true
}

func (a *auth) valid(session string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[session]
}

// token is the CSRF token of one decision: bound to the session, the
// approval ID and the argument digest, so it can decide nothing else.
func (a *auth) token(session, id, digest string) string {
	m := hmac.New(sha256.New, a.key)
	m.Write([]byte("toolwarden approval page csrf v1\x00" + session + "\x00" + id + "\x00" + digest))
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
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

type sessionHandler func(w http.ResponseWriter, r *http.Request, session string)

// session lets through only requests with a session cookie.
func (p *Page) session(h sessionHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(sessionCookie)
		if err != nil || !p.auth.valid(c.Value) {
			http.Error(w, "no approval session: open the URL toolwarden serve printed", http.StatusForbidden)
			return
		}
		h(w, r, c.Value)
	}
}
