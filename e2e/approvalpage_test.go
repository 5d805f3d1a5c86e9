package e2e

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// pageServer starts `toolwarden serve --approval-page` over stdio with a
// client that cannot elicit, and returns it with the page's one-time URL
// read from the server's stderr.
func pageServer(t *testing.T, env []string, args ...string) (*client.Client, string) {
	t.Helper()
	tr := transport.NewStdio(binary, env, append([]string{"serve", "--approval-page"}, args...)...)
	c := client.NewClient(tr, client.WithDiscoverTimeout(30*time.Second))
	require.NoError(t, c.Start(ctxT(t)))
	t.Cleanup(func() { c.Close() })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(tr.Stderr())
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "http://127.0.0.1:") {
				urls <- line
			}
		}
	}()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = legacyProtocol
	init.Params.ClientInfo = mcp.Implementation{Name: "no-elicitation", Version: "1"}
	_, err := c.Initialize(ctxT(t), init)
	require.NoError(t, err)
	select {
	case u := <-urls:
		return c, u
	case <-time.After(30 * time.Second):
		t.Fatal("serve printed no approval page URL")
	}
	return nil, ""
}

// legacyProtocol is a protocol without per-request capabilities: the
// client's missing elicitation capability is read from initialize.
const legacyProtocol = "2025-11-25"

// browser opens a headless Chromium, phone-sized, on the page's URL.
func browser(t *testing.T, url string) context.Context {
	t.Helper()
	// Chromium makes a directory of its own in TMPDIR (its singleton
	// socket), left behind when it is killed: the test's, not /tmp.
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(testenv.Chromium(t)),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(412, 915), chromedp.Env("TMPDIR="+t.TempDir()))
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	browserCtx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	// The first Run starts the browser, which lives as long as its
	// context: no timeout there, one on every later step.
	require.NoError(t, chromedp.Do(browserCtx))
	ctx, cancel := context.WithTimeout(browserCtx, 90*time.Second)
	t.Cleanup(cancel)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#empty"))))
	return ctx
}

// writeAsync calls write_file in the background and delivers its error
// code ("" when it ran).
func writeAsync(t *testing.T, c *client.Client, path, content string) <-chan string {
	out := make(chan string, 1)
	go func() { out <- write(t, c, path, content) }()
	return out
}

// card reads the waiting call the page shows, once it shows one.
type shownCard struct{ tool, preview, identity, session, rest string }

func waitCard(t *testing.T, ctx context.Context) shownCard {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#cards .card .approve"))))
	text := func(sel string) string {
		s, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS("#cards .card "+sel)))
		require.NoError(t, err, sel)
		return s
	}
	return shownCard{tool: text(".tool"), preview: text(".preview"), identity: text(".identity"),
		session: text(".session"), rest: text(".restpre")}
}

// click presses a card's button and waits for the page it leads to (a
// new document, told by its time origin).
func click(t *testing.T, ctx context.Context, button string) {
	t.Helper()
	origin := func() float64 {
		v, _ := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.readyState === "complete" ? performance.timeOrigin : 0`))
		return v
	}
	before := origin()
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#cards .card "+button))))
	require.Eventually(t, func() bool { now := origin(); return now != 0 && now != before }, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#message"))))
}

// TestApprovalPageInBrowser: a client without elicitation writes a file;
// the page, in a real browser, shows the exact action at once; Approve
// writes it, Deny refuses; hostile content is shown as text, folded.
func TestApprovalPageInBrowser(t *testing.T) {
	ws, env := workspace(t)
	c, url := pageServer(t, env, "--workspace", ws)
	ctx := browser(t, url)

	res := writeAsync(t, c, "notes/page.txt", "hello from the page\n")
	card := waitCard(t, ctx)
	require.Equal(t, "write_file", card.tool)
	require.True(t, strings.HasPrefix(card.preview, "Create file notes/page.txt (20 bytes, creating notes if missing)"), card.preview)
	require.Contains(t, card.preview, "+hello from the page")
	require.NotEmpty(t, card.session)
	// Quality 100 is a PNG; below, a JPEG.
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	shotPath := filepath.Join(t.TempDir(), "approval-page.png")
	require.NoError(t, os.WriteFile(shotPath, shot, 0o644))
	require.Greater(t, len(shot), 10_000, "a screenshot of the card (%s)", shotPath)
	require.Equal(t, "\x89PNG", string(shot[:4]))

	click(t, ctx, ".approve")
	require.Empty(t, <-res)
	require.Equal(t, "hello from the page\n", readWS(ws, "notes/page.txt"))

	res = writeAsync(t, c, "notes/denied.txt", "no\n")
	waitCard(t, ctx)
	click(t, ctx, ".deny")
	require.Equal(t, "denied.approval_declined", <-res)
	require.Equal(t, "<missing>", readWS(ws, "notes/denied.txt"))

	hostile := "<script>window.pwned=1</script><img src=x onerror=window.pwned=2>\u202Egnp.exe\n" + strings.Repeat("long line ", 100_000)
	res = writeAsync(t, c, "notes/hostile.txt", hostile)
	card = waitCard(t, ctx)
	pwned, err := chromedp.Run(ctx, chromedp.Evaluate[string]("typeof window.pwned"))
	require.NoError(t, err)
	restShown, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!document.querySelector("#cards .card .rest").hidden`))
	require.NoError(t, err)
	require.Equal(t, "undefined", pwned, "no script in the action ran")
	require.Contains(t, card.preview, "+<script>window.pwned=1</script><img src=x onerror=window.pwned=2>\\u{202E}gnp.exe",
		"markup is shown as text, the bidi override escaped")
	require.NotContains(t, card.preview, "\u202E")
	require.Less(t, len(card.preview), 9<<10, "only the head of a 1 MB action is unfolded")
	require.True(t, restShown)
	require.Greater(t, len(card.rest), 900_000, "the rest is folded, not dropped")
	click(t, ctx, ".deny")
	require.Equal(t, "denied.approval_declined", <-res)
	require.Equal(t, "<missing>", readWS(ws, "notes/hostile.txt"))
}

// pageSession logs in with the one-time URL and returns a client that
// keeps the session cookie and does not follow redirects, and the base
// of the session's page (the origin and the session's own path).
func pageSession(t *testing.T, url string) (*http.Client, string) {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := hc.Get(url)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.True(t, strings.HasPrefix(res.Header.Get("Location"), "/s/"), res.Header.Get("Location"))
	return hc, originOf(url) + res.Header.Get("Location")
}

// originOf is the scheme and host of an http URL.
func originOf(url string) string {
	host, _, _ := strings.Cut(strings.TrimPrefix(url, "http://"), "/")
	return "http://" + host
}

var hiddenField = regexp.MustCompile(`name="(id|digest|csrf)" value="([^"]*)"`)

// pageForm reads the waiting call's form fields off the session's page.
func pageForm(t *testing.T, hc *http.Client, base string) neturl.Values {
	t.Helper()
	form := neturl.Values{}
	require.Eventually(t, func() bool {
		res, err := hc.Get(base)
		if err != nil {
			return false
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		for _, m := range hiddenField.FindAllStringSubmatch(string(body), -1) {
			if m[2] != "" && form.Get(m[1]) == "" { // the first card's, not the empty <template>'s
				form.Set(m[1], m[2])
			}
		}
		return form.Get("csrf") != ""
	}, 30*time.Second, 20*time.Millisecond)
	return form
}

// postDecision posts form to the session's page at base, from the origin
// from.
func postDecision(t *testing.T, hc *http.Client, base, from string, form neturl.Values) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"decide", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", from)
	res, err := hc.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	return res.StatusCode
}

// TestApprovalPageRefusesForgeries: against the built binary, a decision
// from another origin, with a replayed or altered token, or for an
// unknown call decides nothing and writes nothing; the real one does.
func TestApprovalPageRefusesForgeries(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	c, url := pageServer(t, env, "--workspace", ws)
	hc, base := pageSession(t, url)
	origin := originOf(url)
	res := writeAsync(t, c, "notes/forged.txt", "forged?\n")
	form := pageForm(t, hc, base)
	with := func(k, v string) neturl.Values {
		f := neturl.Values{}
		for key := range form {
			f.Set(key, form.Get(key))
		}
		f.Set(k, v)
		return f
	}
	for name, tc := range map[string]struct {
		from string
		form neturl.Values
		code int
	}{
		"cross-origin":    {"http://evil.example", with("action", "approve"), http.StatusForbidden},
		"altered token":   {origin, with("csrf", "A"+form.Get("csrf")[1:]), http.StatusForbidden},
		"unknown ID":      {origin, with("id", "0000000000000000"), http.StatusForbidden},
		"other arguments": {origin, with("digest", strings.Repeat("0", 64)), http.StatusForbidden},
	} {
		if tc.form.Get("action") == "" {
			tc.form.Set("action", "approve")
		}
		require.Equal(t, tc.code, postDecision(t, hc, base, tc.from, tc.form), name)
	}
	select {
	case code := <-res:
		t.Fatalf("the call ended (%q) on a forged decision", code)
	case <-time.After(200 * time.Millisecond):
	}
	require.Equal(t, "<missing>", readWS(ws, "notes/forged.txt"))

	require.Equal(t, http.StatusSeeOther, postDecision(t, hc, base, origin, with("action", "deny")))
	require.Equal(t, "denied.approval_declined", <-res)
	require.Equal(t, http.StatusConflict, postDecision(t, hc, base, origin, with("action", "approve")), "a replay finds the call ended")
	require.Equal(t, "<missing>", readWS(ws, "notes/forged.txt"))
}

// TestApprovalPagePythonClient: the official Python SDK, without an
// elicitation callback, over stdio; the human approves and denies on the
// page (scripts/pyclient/page_check.py plays them with an HTTP client).
func TestApprovalPagePythonClient(t *testing.T) {
	py := testenv.Need(t, "TOOLWARDEN_TEST_PYTHON")[0] // scripts/test sets it up
	script, err := filepath.Abs("../scripts/pyclient/page_check.py")
	require.NoError(t, err)
	ws, env := workspace(t)
	cmd := exec.Command(py, script, "--cmd", binary, "--workspace", ws)
	cmd.Env = env
	out, err := cmd.Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, string(stderr))
	require.JSONEq(t, `{"approved": true, "denied": true, "forged_refused": true}`, string(out))
	observe(t, pythonSDK, pythonSDKVersion(t), approvalColumn, "✓ page (stdio, no elicitation callback): approved write runs, denial refuses, a cross-origin decision is refused")
}
