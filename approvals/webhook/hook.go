// Package webhook is the webhook approval channel for team setups:
// each call that waits in an approvals.Hub is POSTed, HMAC-signed, to the
// operator's webhook, and the decision comes back, signed with the same
// secret, on a callback endpoint. The POST carries the action's preview,
// never the raw arguments.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/toolwarden/toolwarden/approvals"
)

// Headers of a signed request, both ways.
const (
	// SignatureHeader is "sha256=" and the hex HMAC-SHA256, under the
	// shared secret, of the timestamp, a dot, and the body.
	SignatureHeader = "X-Toolwarden-Signature"
	// TimestampHeader is the Unix time of signing; a callback more than
	// MaxSkew away from now is refused, so a captured one cannot be
	// replayed later.
	TimestampHeader = "X-Toolwarden-Timestamp"
)

// MaxSkew bounds how old or early a signed callback may be.
const MaxSkew = 5 * time.Minute

// maxPreviewBytes bounds the preview a POST carries.
const maxPreviewBytes = 64 << 10

// Pending is the body of the POST to the webhook.
type Pending struct {
	Event    string    `json:"event"` // "approval.pending"
	ID       string    `json:"id"`
	Tool     string    `json:"tool"`
	Digest   string    `json:"args_sha256"`
	Identity string    `json:"identity,omitempty"`
	Session  string    `json:"session"`
	Preview  string    `json:"preview"`
	Cut      bool      `json:"preview_truncated,omitempty"`
	Expires  time.Time `json:"expires"`
	// Callback is where the decision goes (Decision, signed).
	Callback string `json:"callback_url"`
}

// Decision is the body of the signed callback.
type Decision struct {
	ID     string `json:"id"`
	Digest string `json:"args_sha256"`
	// Action is approve or deny.
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
	// By names who decided, for the audit line (at most 64 bytes kept).
	By string `json:"by,omitempty"`
}

// Sign returns the signature header value of body at ts.
func Sign(secret []byte, ts time.Time, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(strconv.FormatInt(ts.Unix(), 10) + "."))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// verify checks a signed request's headers against body at now.
func verify(secret []byte, h http.Header, body []byte, now time.Time) error {
	sec, err := strconv.ParseInt(h.Get(TimestampHeader), 10, 64)
	if err != nil {
		return errors.New("no valid " + TimestampHeader)
	}
	ts := time.Unix(sec, 0)
	if d := now.Sub(ts); d > MaxSkew || d < -MaxSkew {
		return fmt.Errorf("the signature's time is %s away from now (at most %s)", d.Round(time.Second), MaxSkew)
	}
	if !hmac.Equal([]byte(h.Get(SignatureHeader)), []byte(Sign(secret, ts, body))) {
		return errors.New("bad " + SignatureHeader)
	}
	return nil
}

// Hook posts the hub's waiting calls to the webhook and takes decisions
// on its callback.
type Hook struct {
	hub      *approvals.Hub
	url      string
	secret   []byte
	callback string
	client   *http.Client
	log      *slog.Logger
	now      func() time.Time
}

// New returns a hook posting to url, signed with secret; callback is the
// URL its Handler is reached at.
func New(hub *approvals.Hub, url string, secret []byte, callback string, log *slog.Logger) *Hook {
	return &Hook{hub: hub, url: url, secret: secret, callback: callback, log: log, now: time.Now,
		client: &http.Client{Timeout: 10 * time.Second}}
}

// Start posts each call as it starts waiting, from now until ctx ends.
func (k *Hook) Start(ctx context.Context) {
	events, cancel := k.hub.Subscribe()
	go func() {
		defer func() { cancel() }()
		for {
			select {
			case <-ctx.Done():
				return
			case e, open := <-events:
				if !open {
					// Dropped for falling behind: catch up on what waits.
					events, cancel = k.hub.Subscribe()
					for _, r := range k.hub.List() {
						go k.post(ctx, r)
					}
					continue
				}
				if e.Kind == "pending" {
					go k.post(ctx, e.Request)
				}
			}
		}
	}()
}

// post sends one waiting call; a failure is logged, and the call waits
// for another channel or its timeout.
func (k *Hook) post(ctx context.Context, r approvals.Request) {
	p := Pending{Event: "approval.pending", ID: r.ID, Tool: r.Tool, Digest: r.Digest, Identity: r.Identity,
		Session: r.Session, Preview: r.Preview, Expires: r.Expires, Callback: k.callback}
	if len(p.Preview) > maxPreviewBytes {
		p.Preview, p.Cut = p.Preview[:maxPreviewBytes], true
	}
	body, _ := json.Marshal(p)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, k.url, bytes.NewReader(body))
	if err != nil {
		k.log.Warn("approval webhook", "id", r.ID, "err", err)
		return
	}
	now := k.now()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(TimestampHeader, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(SignatureHeader, Sign(k.secret, now, body))
	res, err := k.client.Do(req)
	if err != nil {
		k.log.Warn("approval webhook not reached", "id", r.ID, "err", err)
		return
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		k.log.Warn("approval webhook refused the call", "id", r.ID, "status", res.StatusCode)
	}
}
