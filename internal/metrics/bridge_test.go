package metrics

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

func scrapeBridge(t *testing.T, b *Bridge) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + Path)
	require.NoError(t, err)
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// TestBridgeSpend: requests, tokens and spend are counted by model,
// currency and purpose; an unknown purpose and models past the cap
// cannot add series.
func TestBridgeSpend(t *testing.T) {
	b := NewBridge()
	b.Request(BridgeRequest{Model: "gemini-2.5-pro", Purpose: "turn", Currency: "USD", Input: 1500, CachedInput: 500, Output: 700, CostMicros: 2500})
	b.Request(BridgeRequest{Model: "gemini-2.5-pro", Purpose: "summary", Currency: "USD", Input: 100, Output: 10, CostMicros: 120})
	b.Request(BridgeRequest{Model: "gemini-2.5-pro", Purpose: "turn", Currency: "USD", Input: 1, Output: 1, CostMicros: 3})
	b.Request(BridgeRequest{Model: "gemini-2.5-pro", Purpose: "made-up", Input: 1})
	for i := range 2 * maxModels {
		b.Request(BridgeRequest{Model: fmt.Sprintf("m%d", i), Purpose: "turn", Input: 1})
	}
	fams := scrapeBridge(t, b)
	require.Equal(t, 2503.0, value(t, fams, "toolwarden_bridge_spend_micros_total", map[string]string{"model": "gemini-2.5-pro", "currency": "USD", "purpose": "turn"}))
	require.Equal(t, 120.0, value(t, fams, "toolwarden_bridge_spend_micros_total", map[string]string{"model": "gemini-2.5-pro", "currency": "USD", "purpose": "summary"}))
	require.Equal(t, 1602.0, value(t, fams, "toolwarden_bridge_tokens_total", map[string]string{"model": "gemini-2.5-pro", "kind": "input"}))
	require.Equal(t, 500.0, value(t, fams, "toolwarden_bridge_tokens_total", map[string]string{"model": "gemini-2.5-pro", "kind": "cached_input"}))
	require.Equal(t, 711.0, value(t, fams, "toolwarden_bridge_tokens_total", map[string]string{"model": "gemini-2.5-pro", "kind": "output"}))
	require.Equal(t, 1.0, value(t, fams, "toolwarden_bridge_requests_total", map[string]string{"model": "gemini-2.5-pro", "purpose": Other}))
	require.Len(t, fams["toolwarden_bridge_spend_micros_total"].Metric, 2, "unpriced requests add no spend series")
	require.Len(t, fams["toolwarden_bridge_requests_total"].Metric, 3+maxModels, "models past the cap count as one series")
	require.Contains(t, fams, "toolwarden_build_info")
}

// The bridge's listener refuses a Host a DNS-rebinding page could send,
// as the server's does.
func TestBridgeServeChecksHost(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { NewBridge().Serve(ctx, ln, slog.New(slog.DiscardHandler)); close(done) }()
	defer func() { cancel(); <-done }()
	c := &http.Client{Timeout: 30 * time.Second}
	req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+Path, nil)
	req.Host = "evil.example:80"
	resp, err := c.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, err = c.Get("http://" + ln.Addr().String() + Path)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}
