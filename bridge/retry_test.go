package bridge_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/bridge"
	fake "github.com/toolwarden/toolwarden/internal/llmfake/gemini"
	"google.golang.org/genai"
)

func TestRetry429TwiceThenSuccess(t *testing.T) {
	h := newHarness(t, setup{},
		fake.Turn{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "7"}},
		fake.Turn{Status: http.StatusTooManyRequests},
		fake.Reply(fake.Text("finally")))
	answer, err := h.b.Ask(context.Background(), "hi")
	require.NoError(t, err)
	assert.Equal(t, "finally", answer)
	require.Len(t, h.fake.Requests(), 3)
	require.Len(t, h.waits.d, 2)
	assert.GreaterOrEqual(t, h.waits.d[0], 7*time.Second, "Retry-After is honoured")
	// Second wait: backoff with jitter over 2 s, between half and all of it.
	assert.GreaterOrEqual(t, h.waits.d[1], time.Second)
	assert.LessOrEqual(t, h.waits.d[1], 2*time.Second)
}

func TestRetry500UntilBudgetSpent(t *testing.T) {
	h := newHarness(t, setup{attempts: 3}, fake.Turn{Status: http.StatusInternalServerError, Repeat: true})
	_, err := h.b.Ask(context.Background(), "hi")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "giving up after 3 attempts")
	assert.Contains(t, err.Error(), "500")
	assert.Len(t, h.fake.Requests(), 3)
	assert.Len(t, h.waits.d, 2)
}

func TestNoRetryOnClientError(t *testing.T) {
	h := newHarness(t, setup{}, fake.Turn{Status: http.StatusBadRequest, Repeat: true})
	_, err := h.b.Ask(context.Background(), "hi")
	require.Error(t, err)
	assert.Len(t, h.fake.Requests(), 1)
}

func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{genai.APIError{Code: 429}, true},
		{genai.APIError{Code: 500}, true},
		{genai.APIError{Code: 503}, true},
		{genai.APIError{Code: 400}, false},
		{genai.APIError{Code: 403}, false},
		{context.Canceled, false},
		{errors.New("plain"), false},
	} {
		assert.Equal(t, tc.want, bridge.Retryable(tc.err), "%v", tc.err)
	}
}

func TestRetryStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	r := bridge.Retry{Attempts: 10, Base: time.Millisecond, Max: time.Millisecond, Sleep: func(ctx context.Context, _ time.Duration) error {
		cancel()
		return ctx.Err()
	}}
	err := r.Do(ctx, func(context.Context) error { calls++; return genai.APIError{Code: 503} }, func() time.Duration { return 0 })
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, calls)
}

func TestRetryAfterHTTPDate(t *testing.T) {
	at := time.Now().Add(20 * time.Second).UTC().Format(http.TimeFormat)
	h := newHarness(t, setup{},
		fake.Turn{Status: http.StatusServiceUnavailable, Header: map[string]string{"Retry-After": at}},
		fake.Reply(fake.Text("finally")))
	_, err := h.b.Ask(context.Background(), "hi")
	require.NoError(t, err)
	require.Len(t, h.waits.d, 1)
	// The date has whole seconds and was set before the harness started:
	// the wait is 20 s less that set-up (seconds on a loaded machine).
	assert.LessOrEqual(t, h.waits.d[0], 20*time.Second)
	assert.Greater(t, h.waits.d[0], 10*time.Second)
}

// TestRetryAfterTooLongGivesUp: a server asking to wait longer than
// MaxAfter (a day's quota spent, or a hostile endpoint) is not waited for
// silently: the request fails at once, saying how long it asked.
func TestRetryAfterTooLongGivesUp(t *testing.T) {
	for _, header := range []map[string]string{{"Retry-After": "86400"}, {"Retry-After": time.Now().Add(3 * time.Hour).UTC().Format(http.TimeFormat)}} {
		h := newHarness(t, setup{}, fake.Turn{Status: http.StatusTooManyRequests, Header: header, Repeat: true})
		_, err := h.b.Ask(context.Background(), "hi")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "asks to wait")
		assert.Contains(t, err.Error(), "429")
		assert.Empty(t, h.waits.d, "no wait")
		assert.Len(t, h.fake.Requests(), 1)
	}
}
