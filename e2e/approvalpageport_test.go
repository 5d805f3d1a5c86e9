package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// thief is another local listener on 127.0.0.1 (a dev server, another
// account's process): it keeps every credential a browser sends it and
// replays it against the approval page, as the attack on issue 41 did.
type thief struct {
	pageOrigin string

	mu       sync.Mutex
	cookies  []string // the Cookie headers it received
	replayed []int    // the status of each replayed decision
}

func (th *thief) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	got := r.Header.Values("Cookie")
	th.mu.Lock()
	th.cookies = append(th.cookies, got...)
	th.mu.Unlock()
	if len(got) > 0 {
		th.replay(strings.Join(got, "; "))
	}
	_, _ = io.WriteString(w, "<!doctype html><title>dev server</title><p id=done>hello")
}

// replay is the attack outside any browser: read the page's CSRF fields
// with the stolen cookies, then post approve with a forged Origin.
func (th *thief) replay(cookie string) {
	get, _ := http.NewRequest(http.MethodGet, th.pageOrigin+"/", nil)
	get.Header.Set("Cookie", cookie)
	res, err := noRedirects.Do(get)
	if err != nil {
		return
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	form := neturl.Values{"action": {"approve"}}
	for _, m := range hiddenField.FindAllStringSubmatch(string(body), -1) {
		if m[2] != "" && form.Get(m[1]) == "" {
			form.Set(m[1], m[2])
		}
	}
	post, _ := http.NewRequest(http.MethodPost, th.pageOrigin+"/decide", strings.NewReader(form.Encode()))
	post.Header.Set("Cookie", cookie)
	post.Header.Set("Origin", th.pageOrigin)
	post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if res, err = noRedirects.Do(post); err == nil {
		res.Body.Close()
		th.mu.Lock()
		th.replayed = append(th.replayed, res.StatusCode)
		th.mu.Unlock()
	}
}

// noRedirects shows the page's own answer (303 is a decision taken).
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// TestApprovalPageCookieStaysOnItsPort: browsers do not scope cookies by
// port, so a session cookie of the page on 127.0.0.1 would be sent to
// every other listener on 127.0.0.1 the same browser visits. The human
// logs in to the page in headless Chromium, a call waits, and the same
// browser then opens another local listener: that listener must receive
// no credential of the page, and replaying what it got approves nothing.
func TestApprovalPageCookieStaysOnItsPort(t *testing.T) {
	ws, env := workspace(t)
	c, url := pageServer(t, env, "--workspace", ws)
	ctx := browser(t, url)
	res := writeAsync(t, c, "notes/stolen.txt", "written by another port\n")
	waitCard(t, ctx)

	th := &thief{pageOrigin: originOf(url)}
	other := httptest.NewServer(th) // 127.0.0.1, another port
	t.Cleanup(other.Close)
	tab, cancel := chromedp.NewContext(ctx) // a second tab of the same browser
	t.Cleanup(cancel)
	for _, path := range []string{"/", "/login", "/decide", "/events", "/assets/app.js"} {
		require.NoError(t, chromedp.Do(tab, chromedp.Navigate(other.URL+path)))
	}

	th.mu.Lock()
	cookies, replayed := th.cookies, th.replayed
	th.mu.Unlock()
	require.Empty(t, cookies, "another port got the page's cookies (replayed decisions: %v)", replayed)
	select {
	case code := <-res:
		t.Fatalf("the call ended (%q) after the visit to another port", code)
	case <-time.After(200 * time.Millisecond):
	}
	require.Equal(t, "<missing>", readWS(ws, "notes/stolen.txt"))

	click(t, ctx, ".deny") // the human's own tab still decides
	require.Equal(t, "denied.approval_declined", <-res)
	audit := auditText(t, auditPathOf(t, env))
	require.NotContains(t, audit, `"outcome":"approved"`)
	require.Contains(t, audit, `"outcome":"declined"`)
}
