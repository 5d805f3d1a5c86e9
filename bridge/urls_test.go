package bridge_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/bridge"
)

func TestCredentialsNeverCrossTheNetworkInClear(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://generativelanguage.googleapis.com", true},
		{"http://127.0.0.1:8080", true},
		{"http://localhost:9", true},
		{"http://[::1]:9", true},
		{"http://generativelanguage.googleapis.com", false},
		{"http://127.0.0.1.evil.example", false},
		{"http://0.0.0.0:8080", false},
		{"http://10.0.0.1", false},
		{"ftp://127.0.0.1", false},
		{"//127.0.0.1", false},
		{"127.0.0.1:8080", false},
		{"", true}, // the SDK's default endpoint, https
	} {
		_, err := bridge.NewGemini(context.Background(), bridge.GeminiConfig{APIKey: "k", BaseURL: tc.url, Model: "m", Retry: bridge.DefaultRetry()})
		if tc.ok {
			assert.NoError(t, err, tc.url)
			continue
		}
		require.Error(t, err, tc.url)
		assert.Contains(t, err.Error(), "--base-url")
		assert.NotContains(t, err.Error(), `"k"`)
		if tc.url == "" {
			continue
		}
		_, err = bridge.Connect(context.Background(), bridge.Server{URL: tc.url, Token: "tok"}, &bridge.Approver{})
		require.Error(t, err, tc.url)
		assert.Contains(t, err.Error(), "--server-url")
	}
}

// TestServerRedirectNotFollowed: a --server-url server that answers with a
// redirect does not get the bridge to send its bearer token elsewhere
// (GO-2026-6911 in mcp-go's default client).
func TestServerRedirectNotFollowed(t *testing.T) {
	var leaked atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(true)
		w.WriteHeader(http.StatusTeapot)
	}))
	defer other.Close()
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer redirecting.Close()

	_, err := bridge.Connect(context.Background(), bridge.Server{URL: redirecting.URL + "/mcp", Token: "tok"}, &bridge.Approver{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "redirects are not followed")
	assert.False(t, leaked.Load(), "the redirect target was called")
}
