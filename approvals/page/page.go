// Package page serves the approval page: a loopback-only web page
// where the human approves or denies the calls that wait in an
// approvals.Hub, for clients that cannot ask the human themselves.
//
// The page is reached through a URL with a one-time secret, which is
// exchanged for a session cookie on first use; the cookie is scoped to the
// session's own secret path, so the browser sends it to no other listener
// on the same host. It shows the exact action
// (escaped: file content and arguments are hostile), refreshes itself
// over server-sent events, and accepts a decision only from its own
// origin, with the session cookie and a CSRF token bound to the session,
// the approval ID and the argument digest.
package page

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"net"
	"net/http"
	"time"

	"github.com/toolwarden/toolwarden/approvals"
)

//go:embed assets
var assets embed.FS

var pageTemplate = template.Must(template.ParseFS(assets, "assets/index.html"))

// Page is the approval page of one server.
type Page struct {
	hub    *approvals.Hub
	auth   *auth
	origin string // http://127.0.0.1:PORT, set by Listen
	now    func() time.Time
}

// New returns the page over hub.
func New(hub *approvals.Hub) *Page {
	p := &Page{hub: hub, auth: newAuth(), now: time.Now}
	hub.SetLinker(p.callLink)
	return p
}

// Listen opens the page's own listener on addr (a loopback host:port)
// and returns the URL to open, with the one-time secret.
func (p *Page) Listen(addr string) (net.Listener, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	host, ok := ln.Addr().(*net.TCPAddr)
	if !ok || !host.IP.IsLoopback() {
		ln.Close()
		return nil, "", errors.New("approval page: " + addr + " is not a loopback address")
	}
	p.origin = "http://" + ln.Addr().String()
	return ln, p.origin + pathLogin + "?secret=" + p.auth.secret, nil
}

// Serve serves the page on ln until ctx ends.
func (p *Page) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// The page's paths. A session's page, events and decisions live under
// its own /s/KEY/ (see startSession); the login paths and the assets,
// which need no session, at the root.
const (
	pathLogin   = "/login"
	pathCall    = "/call"
	pathSession = "/s/"
	pathEvents  = "events"
	pathDecide  = "decide"
	pathStatic  = "/assets/"
)

// Handler routes the page's requests; every response carries the
// security headers, and every request must name the page's own host (a
// DNS-rebinding site cannot reach it under another name).
func (p *Page) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+pathLogin, p.login)
	mux.HandleFunc("GET "+pathCall, p.call)
	mux.HandleFunc("GET /{$}", noSession)
	mux.HandleFunc("GET "+pathSession+"{key}/{$}", p.session(p.index))
	mux.HandleFunc("GET "+pathSession+"{key}/"+pathEvents, p.session(p.events))
	mux.HandleFunc("POST "+pathSession+"{key}/"+pathDecide, p.session(p.decide))
	mux.HandleFunc("GET "+pathStatic+"app.js", asset("assets/app.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET "+pathStatic+"app.css", asset("assets/app.css", "text/css; charset=utf-8"))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secureHeaders(w.Header())
		if p.origin != "" && "http://"+r.Host != p.origin {
			http.Error(w, "wrong host: open the approval page by the URL toolwarden printed", http.StatusMisdirectedRequest)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// asset serves one embedded file. Two named files, not a file server: no
// path from the request reaches the file system (nor http.FileServerFS,
// GO-2026-6609).
func asset(name, contentType string) http.HandlerFunc {
	body, err := assets.ReadFile(name)
	if err != nil {
		panic("approvals/page: missing embedded " + name)
	}
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(body)
	}
}

// csp allows only the page's own script, style and event stream: no
// inline script, no frames, forms posting only to the page.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func secureHeaders(h http.Header) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	// same-origin, not no-referrer: under no-referrer a browser sends
	// "Origin: null" with the page's own form, which decide refuses.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}
