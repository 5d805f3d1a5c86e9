package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/approvals/webhook"
)

const hookSecret = "e2e-webhook-secret-0123456789abcdef"

// signedPost posts body to url, signed with key.
func signedPost(t *testing.T, url string, key string, body []byte) int {
	t.Helper()
	status, _ := signedPostAnswer(t, url, key, body)
	return status
}

// signedPostAnswer is signedPost, with the answer's body.
func signedPostAnswer(t *testing.T, url string, key string, body []byte) (int, string) {
	t.Helper()
	now := time.Now()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set(webhook.TimestampHeader, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(webhook.SignatureHeader, webhook.Sign([]byte(key), now, body))
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(answer)
}

// startWebhookServer serves over stdio with the webhook channel, posting
// to an httptest receiver that checks each POST's signature; it returns
// the client, the workspace and the waiting calls the receiver got.
func startWebhookServer(t *testing.T) (*client.Client, string, <-chan webhook.Pending) {
	t.Helper()
	got := make(chan webhook.Pending, 4)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ts, _ := strconv.ParseInt(r.Header.Get(webhook.TimestampHeader), 10, 64)
		if r.Header.Get(webhook.SignatureHeader) != webhook.Sign([]byte(hookSecret), time.Unix(ts, 0), body) {
			t.Errorf("unsigned webhook POST")
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var p webhook.Pending
		if err := json.Unmarshal(body, &p); err != nil {
			t.Error(err)
		}
		got <- p
	}))
	t.Cleanup(recv.Close)

	ws, env := workspace(t)
	cfg := filepath.Join(t.TempDir(), "toolwarden.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(
		"approval:\n  channel: [elicit, webhook]\n  webhook:\n    url: %s/hook\n    secret_env: TW_E2E_HOOK_SECRET\n", recv.URL)), 0o644))
	env = append(env, "TW_E2E_HOOK_SECRET="+hookSecret)
	c := client.NewClient(transport.NewStdio(binary, env, "serve", "--workspace", ws, "--config", cfg),
		client.WithDiscoverTimeout(30*time.Second))
	require.NoError(t, c.Start(ctxT(t)))
	t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = legacyProtocol
	init.Params.ClientInfo = mcp.Implementation{Name: "no-elicitation", Version: "1"}
	_, err := c.Initialize(ctxT(t), init)
	require.NoError(t, err)
	return c, ws, got
}

// TestApprovalWebhook: the built binary POSTs a waiting call, signed, to
// the team's webhook (an httptest receiver that checks the signature);
// a forged callback decides nothing; the signed one approves, then denies.
func TestApprovalWebhook(t *testing.T) {
	t.Parallel()
	c, ws, got := startWebhookServer(t)

	res := writeAsync(t, c, "notes/hook.txt", "approved by the team\n")
	p := <-got
	require.Equal(t, "write_file", p.Tool)
	require.Contains(t, p.Preview, "Create file notes/hook.txt")
	decision, _ := json.Marshal(webhook.Decision{ID: p.ID, Digest: p.Digest, Action: "approve", By: "alice"})
	require.Equal(t, http.StatusUnauthorized, signedPost(t, p.Callback, "forged-secret-0123456789abcdef", decision))
	require.Equal(t, "<missing>", readWS(ws, "notes/hook.txt"))
	require.Equal(t, http.StatusNoContent, signedPost(t, p.Callback, hookSecret, decision))
	require.Empty(t, <-res)
	require.Equal(t, "approved by the team\n", readWS(ws, "notes/hook.txt"))
	require.Equal(t, http.StatusConflict, signedPost(t, p.Callback, hookSecret, decision), "the call ended")

	res = writeAsync(t, c, "notes/nohook.txt", "no\n")
	p = <-got
	decision, _ = json.Marshal(webhook.Decision{ID: p.ID, Digest: p.Digest, Action: "deny", Reason: "not in prod"})
	require.Equal(t, http.StatusNoContent, signedPost(t, p.Callback, hookSecret, decision))
	require.Equal(t, "denied.approval_declined", <-res)
	require.Equal(t, "<missing>", readWS(ws, "notes/nohook.txt"))
}

// TestApprovalWebhookStrictBody: a callback body signed with the right
// secret but readable two ways decides nothing. encoding/json took the
// last of "action" and its case twin "Action" (or of two "action"
// members), so a signer that read the first approved what it meant to
// deny; now such a body is refused naming the rule and the call waits on
// until a plain body decides it.
func TestApprovalWebhookStrictBody(t *testing.T) {
	t.Parallel()
	c, ws, got := startWebhookServer(t)
	res := writeAsync(t, c, "notes/twin.txt", "approved by a parser differential\n")
	p := <-got
	head := `{"id":` + mustJSON(t, p.ID) + `,"args_sha256":` + mustJSON(t, p.Digest) + `,`
	for _, tc := range []struct{ name, body, rule string }{
		{"case twin", head + `"action":"deny","Action":"approve"}`, `unknown member name "Action"`},
		{"duplicate", head + `"action":"deny","action":"approve"}`, "duplicate member name"},
		{"unknown member", head + `"action":"approve","approved_by":"ci"}`, `unknown member name "approved_by"`},
	} {
		status, answer := signedPostAnswer(t, p.Callback, hookSecret, []byte(tc.body))
		require.Equal(t, http.StatusBadRequest, status, "%s: %s", tc.name, answer)
		require.Contains(t, answer, tc.rule, tc.name)
		require.Equal(t, "<missing>", readWS(ws, "notes/twin.txt"), "%s: nothing was approved", tc.name)
	}
	deny := []byte(head + `"action":"deny","reason":"strict"}`)
	require.Equal(t, http.StatusNoContent, signedPost(t, p.Callback, hookSecret, deny), "the call still waited")
	require.Equal(t, "denied.approval_declined", <-res)
	require.Equal(t, "<missing>", readWS(ws, "notes/twin.txt"))
}
