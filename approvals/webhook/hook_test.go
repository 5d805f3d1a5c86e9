package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/approvals"
)

var secret = []byte("test-webhook-secret-0123456789abcdef")

// receiver is the operator's webhook: it checks each POST's signature and
// hands the pending call to the test.
func receiver(t *testing.T) (*httptest.Server, <-chan Pending) {
	got := make(chan Pending, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := verify(secret, r.Header, body, time.Now()); err != nil {
			t.Errorf("the webhook POST is not signed right: %v", err)
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var p Pending
		require.NoError(t, json.Unmarshal(body, &p))
		got <- p
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func setup(t *testing.T) (*approvals.Hub, *httptest.Server, <-chan Pending) {
	hub := approvals.New()
	recv, got := receiver(t)
	cb := httptest.NewServer(nil)
	t.Cleanup(cb.Close)
	k := New(hub, recv.URL, secret, cb.URL, slog.New(slog.DiscardHandler))
	cb.Config.Handler = k.Handler()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	k.Start(ctx)
	return hub, cb, got
}

func ask(hub *approvals.Hub, id, preview string) <-chan approvals.Decision {
	out := make(chan approvals.Decision, 1)
	now := time.Now()
	go func() {
		d, err := hub.Ask(context.Background(), approvals.Request{ID: id, Tool: "write_file", Digest: "digest-" + id,
			Session: "s", Preview: preview, Created: now, Expires: now.Add(time.Minute)})
		if err != nil {
			d.Reason = err.Error()
		}
		out <- d
	}()
	return out
}

// callback posts a decision to the callback, signed with key at ts.
func callback(t *testing.T, url string, key []byte, ts time.Time, d Decision) int {
	body, _ := json.Marshal(d)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set(TimestampHeader, strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set(SignatureHeader, Sign(key, ts, body))
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	return res.StatusCode
}

func TestWebhookRoundTrip(t *testing.T) {
	hub, cb, got := setup(t)
	out := ask(hub, "w1", "Create file a.txt\n\n+secret-free preview")
	p := <-got
	require.Equal(t, "approval.pending", p.Event)
	require.Equal(t, "w1", p.ID)
	require.Equal(t, "digest-w1", p.Digest)
	require.Equal(t, cb.URL, p.Callback)
	require.Contains(t, p.Preview, "Create file a.txt")

	now := time.Now()
	good := Decision{ID: p.ID, Digest: p.Digest, Action: "approve", By: "alice\u202e\x1b[31m"}
	for name, tc := range map[string]struct {
		key  []byte
		ts   time.Time
		d    Decision
		code int
	}{
		"forged signature": {[]byte("not-the-secret"), now, good, http.StatusUnauthorized},
		"stale":            {secret, now.Add(-2 * MaxSkew), good, http.StatusUnauthorized},
		"from the future":  {secret, now.Add(2 * MaxSkew), good, http.StatusUnauthorized},
		"other arguments":  {secret, now, Decision{ID: p.ID, Digest: "other", Action: "approve"}, http.StatusConflict},
		"unknown call":     {secret, now, Decision{ID: "nope", Digest: p.Digest, Action: "approve"}, http.StatusConflict},
		"bad action":       {secret, now, Decision{ID: p.ID, Digest: p.Digest, Action: "yes"}, http.StatusBadRequest},
	} {
		require.Equal(t, tc.code, callback(t, cb.URL, tc.key, tc.ts, tc.d), name)
		_, waits := hub.Get("w1")
		require.True(t, waits, "%s: the call still waits", name)
	}
	// Unsigned.
	res, err := http.Post(cb.URL, "application/json", bytes.NewReader([]byte(`{"id":"w1","args_sha256":"digest-w1","action":"approve"}`)))
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)

	require.Equal(t, http.StatusNoContent, callback(t, cb.URL, secret, now, good))
	d := <-out
	require.True(t, d.Approve)
	require.Equal(t, "webhook: alice??[31m", d.By, "control and bidi characters of by are replaced")
	require.Equal(t, http.StatusConflict, callback(t, cb.URL, secret, now, good), "a replay finds the call ended")

	out = ask(hub, "w2", "x")
	p = <-got
	require.Equal(t, http.StatusNoContent, callback(t, cb.URL, secret, time.Now(), Decision{ID: p.ID, Digest: p.Digest, Action: "deny", Reason: "no"}))
	d = <-out
	require.False(t, d.Approve)
	require.Equal(t, "no", d.Reason)
}

func TestWebhookPreviewIsBounded(t *testing.T) {
	hub, _, got := setup(t)
	ask(hub, "big", string(bytes.Repeat([]byte("a"), 2*maxPreviewBytes)))
	p := <-got
	require.Len(t, p.Preview, maxPreviewBytes)
	require.True(t, p.Cut)
}

// callbackRaw posts body byte for byte, correctly signed, and returns
// the status and the answer.
func callbackRaw(t *testing.T, url string, body string) (int, string) {
	now := time.Now()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
	req.Header.Set(TimestampHeader, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(SignatureHeader, Sign(secret, now, []byte(body)))
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(answer)
}

// TestCallbackBodyIsStrict: signed bodies that two JSON readers would
// read differently decide nothing, and the refusal names the rule.
func TestCallbackBodyIsStrict(t *testing.T) {
	hub, cb, got := setup(t)
	out := ask(hub, "s1", "Create file a.txt")
	p := <-got
	head := `{"id":"s1","args_sha256":"digest-s1",`
	for name, tc := range map[string]struct{ body, rule string }{
		"case twin":           {head + `"action":"deny","Action":"approve"}`, `unknown member name "Action"`},
		"upper-case only":     {head + `"ACTION":"approve"}`, `unknown member name "ACTION"`},
		"duplicate action":    {head + `"action":"deny","action":"approve"}`, "duplicate member name"},
		"duplicate id":        {`{"id":"other","id":"s1","args_sha256":"digest-s1","action":"approve"}`, "duplicate member name"},
		"escaped duplicate":   {head + `"action":"deny","\u0061ction":"approve"}`, "duplicate member name"},
		"unknown member":      {head + `"action":"approve","note":"x"}`, `unknown member name "note"`},
		"trailing value":      {head + `"action":"deny"}{"action":"approve"}`, "after top-level value"},
		"action not a word":   {head + `"action":"APPROVE"}`, `action "APPROVE" is neither approve nor deny`},
		"action not a string": {head + `"action":true}`, "action"},
	} {
		status, answer := callbackRaw(t, cb.URL, tc.body)
		require.Equal(t, http.StatusBadRequest, status, "%s: %s", name, answer)
		require.Contains(t, answer, tc.rule, name)
		_, waits := hub.Get(p.ID)
		require.True(t, waits, "%s: the call still waits", name)
	}
	status, answer := callbackRaw(t, cb.URL, head+`"action":"deny","reason":"plain","by":"bob"}`)
	require.Equal(t, http.StatusNoContent, status, answer)
	d := <-out
	require.False(t, d.Approve)
	require.Equal(t, "webhook: bob", d.By)
}
