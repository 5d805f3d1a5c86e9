package page

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/approvals"
)

// served is a page on a real loopback listener with a logged-in browser.
type served struct {
	page    *Page
	hub     *approvals.Hub
	url     string // the one-time URL
	origin  string
	base    string // origin and the session's own path, /s/KEY/
	browser *http.Client
	session string
}

func serve(t testing.TB) *served {
	t.Helper()
	hub := approvals.New()
	p := New(hub)
	ln, u, err := p.Listen("127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = p.Serve(ctx, ln) }()
	jar, _ := cookiejar.New(nil)
	s := &served{page: p, hub: hub, url: u, origin: p.origin,
		browser: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	res, err := s.browser.Get(u)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	s.base = s.origin + res.Header.Get("Location")
	base, err := url.Parse(s.base)
	require.NoError(t, err)
	for _, c := range jar.Cookies(base) {
		s.session = c.Value
	}
	require.NotEmpty(t, s.session)
	return s
}

// wait puts a call in the hub and returns its request and its outcome.
func (s *served) wait(t *testing.T, id string, ttl time.Duration) (approvals.Request, <-chan string) {
	now := time.Now()
	req := approvals.Request{ID: id, Tool: "write_file", Digest: "digest-" + id, Session: "s1", Preview: "Create file a.txt",
		Created: now, Expires: now.Add(ttl)}
	out := make(chan string, 1)
	go func() {
		d, err := s.hub.Ask(context.Background(), req)
		switch {
		case err != nil:
			out <- err.Error()
		case d.Approve:
			out <- "approved by " + d.By
		default:
			out <- "denied by " + d.By
		}
	}()
	require.Eventually(t, func() bool { _, ok := s.hub.Get(id); return ok }, 5*time.Second, time.Millisecond)
	return req, out
}

func (s *served) post(t *testing.T, origin string, form url.Values) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.base+pathDecide, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	res, err := s.browser.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func (s *served) form(r approvals.Request, action string) url.Values {
	return url.Values{"id": {r.ID}, "digest": {r.Digest}, "csrf": {s.page.auth.token(s.session, r.ID, r.Digest)}, "action": {action}}
}

func TestDecisionApproves(t *testing.T) {
	s := serve(t)
	r, out := s.wait(t, "a1", time.Minute)
	code, _ := s.post(t, s.origin, s.form(r, "approve"))
	require.Equal(t, http.StatusSeeOther, code)
	require.Equal(t, "approved by page", <-out)

	r, out = s.wait(t, "a2", time.Minute)
	code, _ = s.post(t, s.origin, s.form(r, "deny"))
	require.Equal(t, http.StatusSeeOther, code)
	require.Equal(t, "denied by page", <-out)
}

// TestDecisionRefusals: every forged, replayed or late decision is
// refused and the call keeps waiting (nothing is decided).
func TestDecisionRefusals(t *testing.T) {
	s := serve(t)
	r, out := s.wait(t, "w1", time.Minute)
	other, _ := s.wait(t, "w2", time.Minute)
	stale := New(s.hub) // a page of an earlier run: another key
	for _, tc := range []struct {
		name   string
		origin string
		form   url.Values
		code   int
		want   string
	}{
		{"cross-origin", "http://evil.example", s.form(r, "approve"), http.StatusForbidden, "own origin"},
		{"no origin", "", s.form(r, "approve"), http.StatusForbidden, "own origin"},
		{"null origin", "null", s.form(r, "approve"), http.StatusForbidden, "own origin"},
		{"no token", s.origin, url.Values{"id": {r.ID}, "digest": {r.Digest}, "action": {"approve"}}, http.StatusForbidden, "CSRF"},
		{"another call's token", s.origin, func() url.Values {
			f := s.form(other, "approve")
			f.Set("id", r.ID)
			f.Set("digest", r.Digest)
			return f
		}(), http.StatusForbidden, "CSRF"},
		{"digest swapped", s.origin, func() url.Values { f := s.form(r, "approve"); f.Set("digest", other.Digest); return f }(), http.StatusForbidden, "CSRF"},
		{"stale token", s.origin, func() url.Values {
			f := s.form(r, "approve")
			f.Set("csrf", stale.auth.token(s.session, r.ID, r.Digest))
			return f
		}(), http.StatusForbidden, "CSRF"},
		{"unknown ID", s.origin, s.form(approvals.Request{ID: "nope", Digest: "x"}, "approve"), http.StatusConflict, "no call waits"},
		{"bad action", s.origin, s.form(r, "maybe"), http.StatusBadRequest, "approve or deny"},
		// Read strictly: a field twice or a field the form has not.
		{"deny then approve", s.origin, func() url.Values { f := s.form(r, "deny"); f.Add("action", "approve"); return f }(),
			http.StatusBadRequest, `field "action" is given 2 times`},
		{"unknown field", s.origin, func() url.Values { f := s.form(r, "approve"); f.Set("by", "terminal"); return f }(),
			http.StatusBadRequest, `unknown field "by"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := s.post(t, tc.origin, tc.form)
			require.Equal(t, tc.code, code, body)
			require.Contains(t, body, tc.want)
			_, waits := s.hub.Get(r.ID)
			require.True(t, waits, "the call still waits")
		})
	}
	// A valid decision, then its replay.
	code, _ := s.post(t, s.origin, s.form(r, "approve"))
	require.Equal(t, http.StatusSeeOther, code)
	require.Equal(t, "approved by page", <-out)
	code, body := s.post(t, s.origin, s.form(r, "deny"))
	require.Equal(t, http.StatusConflict, code, "a replay finds no waiting call: %s", body)
}

func TestDecisionForExpiredCall(t *testing.T) {
	s := serve(t)
	r, out := s.wait(t, "e1", 500*time.Millisecond) // long enough for s.wait to see it waiting
	require.Equal(t, approvals.ErrTimeout.Error(), <-out)
	code, body := s.post(t, s.origin, s.form(r, "approve"))
	require.Equal(t, http.StatusConflict, code, body)
}

func TestSessionAndHost(t *testing.T) {
	s := serve(t)
	// The one-time secret works once.
	res, err := http.Get(s.url)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	// Without the session cookie nothing is shown.
	for _, u := range []string{s.origin + "/", s.base, s.base + pathEvents} {
		res, err := http.Get(u)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusForbidden, res.StatusCode, u)
	}
	// Another host name (DNS rebinding) is refused.
	req, _ := http.NewRequest(http.MethodGet, s.base, nil)
	req.Host = "rebind.example:80"
	res, err = s.browser.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusMisdirectedRequest, res.StatusCode)
}

func TestHeadersAndEscaping(t *testing.T) {
	s := serve(t)
	now := time.Now()
	hostile := "Create file x\n<script>alert(1)</script>\"'&" + strings.Repeat("A", 2*headBytes)
	go func() {
		_, _ = s.hub.Ask(context.Background(), approvals.Request{ID: "h1", Tool: "write_file<b>", Digest: "d", Session: "s<i>",
			Preview: hostile, Created: now, Expires: now.Add(time.Minute)})
	}()
	require.Eventually(t, func() bool { return len(s.hub.List()) == 1 }, 5*time.Second, time.Millisecond)
	res, err := s.browser.Get(s.base)
	require.NoError(t, err)
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "DENY", res.Header.Get("X-Frame-Options"))
	require.Contains(t, res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	require.Contains(t, res.Header.Get("Content-Security-Policy"), "script-src 'self'")
	page := string(body)
	require.NotContains(t, page, "<script>alert(1)")
	require.Contains(t, page, "&lt;script&gt;alert(1)&lt;/script&gt;")
	require.Contains(t, page, "write_file&lt;b&gt;")
	require.Contains(t, page, "Show the remaining")
}

func TestSplitKeepsRunes(t *testing.T) {
	head, rest := split("aé", 2)
	require.Equal(t, "a", head)
	require.Equal(t, "é", rest)
	head, rest = split("abc", 8)
	require.Equal(t, "abc", head)
	require.Empty(t, rest)
}

// TestCallLink: the per-call link of URL-mode elicitation opens, once, a
// session that sees and decides only its call.
func TestCallLink(t *testing.T) {
	s := serve(t)
	a, outA := s.wait(t, "la", time.Minute)
	b, _ := s.wait(t, "lb", time.Minute)
	link := s.hub.Link(a)
	require.True(t, strings.HasPrefix(link, s.origin+pathCall+"?"), link)

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := browser.Get(link)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	base := s.origin + res.Header.Get("Location")
	require.NotEqual(t, s.base, base, "a session of its own, under its own path")
	res, err = http.Get(link)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusForbidden, res.StatusCode, "the link works once")
	res, err = http.Get(strings.Replace(link, "id=la", "id=lb", 1))
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusForbidden, res.StatusCode, "a link cannot be moved to another call")

	res, err = browser.Get(base)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Contains(t, string(body), `value="la"`)
	require.NotContains(t, string(body), `value="lb"`, "the scoped session sees only its call")

	var session string
	for _, c := range jar.Cookies(res.Request.URL) {
		session = c.Value
	}
	scoped := &served{page: s.page, hub: s.hub, origin: s.origin, base: base, browser: browser, session: session}
	code, _ := scoped.post(t, s.origin, scoped.form(b, "approve"))
	require.Equal(t, http.StatusForbidden, code, "nor decides another")
	code, _ = scoped.post(t, s.origin, scoped.form(a, "approve"))
	require.Equal(t, http.StatusSeeOther, code)
	require.Equal(t, "approved by page", <-outA)
}

func TestAssets(t *testing.T) {
	s := serve(t)
	for path, ctype := range map[string]string{"/assets/app.js": "text/javascript", "/assets/app.css": "text/css"} {
		res, err := http.Get(s.origin + path)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, path)
		require.Contains(t, res.Header.Get("Content-Type"), ctype)
		require.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
	}
	for _, path := range []string{"/assets/", "/assets/index.html", "/assets/../page.go"} {
		res, err := http.Get(s.origin + path)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusNotFound, res.StatusCode, path)
	}
}

// TestSessionCookieStaysUnderItsPath: cookies are not scoped by port, so
// the session cookie is scoped by its secret path: a browser (here Go's
// jar, which like browsers ignores the port) sends it to that path only,
// on any port, never to another listener's paths; and the cookie works
// only under its own session's path.
func TestSessionCookieStaysUnderItsPath(t *testing.T) {
	s := serve(t)
	base, err := url.Parse(s.base)
	require.NoError(t, err)
	require.Regexp(t, `^/s/[A-Za-z0-9_-]{43}/$`, base.Path)

	jar, _ := cookiejar.New(nil)
	res, err := (&http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).
		Get(s.page.callLink(approvals.Request{ID: "c1", Digest: "d"}))
	require.NoError(t, err)
	res.Body.Close()
	cookies := res.Cookies()
	require.Len(t, cookies, 1)
	c := cookies[0]
	require.Equal(t, sessionCookie, c.Name)
	require.Equal(t, res.Header.Get("Location"), c.Path, "the cookie's path is the session's page")
	require.True(t, c.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, c.SameSite)

	other := "http://127.0.0.1:1" // another listener on the same host
	for _, u := range []string{other + "/", other + "/decide", other + "/events", other + "/login", s.origin + "/", other + base.Path} {
		parsed, _ := url.Parse(u)
		require.Empty(t, jar.Cookies(parsed), "the cookie goes to %s", u)
	}
	parsed, _ := url.Parse(other + c.Path)
	require.Len(t, jar.Cookies(parsed), 1, "only under its own path")

	for name, tc := range map[string]struct{ cookie, path string }{
		"another session's path":                   {c.Value, base.Path},
		"a made-up path":                           {c.Value, "/s/" + strings.Repeat("A", 43) + "/"},
		"another session's cookie under this path": {s.session, c.Path},
		"no session":                               {"nope", c.Path},
	} {
		req, _ := http.NewRequest(http.MethodGet, s.origin+tc.path, nil)
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: tc.cookie})
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusForbidden, res.StatusCode, name)
	}
	for _, path := range []string{"/decide", "/events"} { // the old paths serve nothing
		req, _ := http.NewRequest(http.MethodGet, s.origin+path, nil)
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: s.session})
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusNotFound, res.StatusCode, path)
	}
}
