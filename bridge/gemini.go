package bridge

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"google.golang.org/genai"
)

// Model generates the next turn of a conversation.
type Model interface {
	Generate(ctx context.Context, history []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error)
}

// GeminiConfig configures the Gemini client.
type GeminiConfig struct {
	APIKey  string // never logged
	BaseURL string // empty: Google's endpoint
	Model   string
	Timeout time.Duration // per attempt; 0 means none
	Retry   Retry
	// HTTPClient is the base client; nil is http.DefaultClient's transport.
	HTTPClient *http.Client
}

// Gemini is a Model backed by the official SDK, with our own retry policy
// (the SDK's does not honour Retry-After, nor can tests speed it up).
type Gemini struct {
	client  *genai.Client
	model   string
	timeout time.Duration
	retry   Retry
}

// ErrNoAPIKey is returned when no API key is configured.
var ErrNoAPIKey = errors.New("no Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY), or bridge.api_key_env, _file or _vault")

// NewGemini returns a Gemini model client.
func NewGemini(ctx context.Context, cfg GeminiConfig) (*Gemini, error) {
	if cfg.APIKey == "" {
		return nil, ErrNoAPIKey
	}
	if cfg.BaseURL != "" {
		if err := checkCredentialURL("--base-url", cfg.BaseURL); err != nil {
			return nil, err
		}
	}
	base := http.DefaultTransport
	if cfg.HTTPClient != nil && cfg.HTTPClient.Transport != nil {
		base = cfg.HTTPClient.Transport
	}
	c, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      cfg.APIKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  &http.Client{Transport: retryAfterRecorder{base}},
		HTTPOptions: genai.HTTPOptions{BaseURL: cfg.BaseURL},
	})
	if err != nil {
		return nil, err
	}
	return &Gemini{client: c, model: cfg.Model, timeout: cfg.Timeout, retry: cfg.Retry}, nil
}

// Generate sends one generateContent request, retried on transient errors,
// each attempt under the per-request timeout.
func (g *Gemini) Generate(ctx context.Context, history []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	slot := new(atomic.Int64)
	ctx = context.WithValue(ctx, retryAfterKey{}, slot)
	var resp *genai.GenerateContentResponse
	var lastErr error
	err := g.retry.Do(ctx, func(ctx context.Context) error {
		slot.Store(0)
		actx, cancel := g.attemptContext(ctx)
		defer cancel()
		var err error
		resp, err = g.client.Models.GenerateContent(actx, g.model, history, cfg)
		if err != nil && ctx.Err() == nil && actx.Err() != nil {
			err = &timeoutError{g.timeout}
		}
		lastErr = err
		return err
	}, func() time.Duration {
		return max(time.Duration(slot.Load()), retryInfoDelay(lastErr))
	})
	return resp, err
}

func (g *Gemini) attemptContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if g.timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, g.timeout)
}

// timeoutError is one attempt running out of its per-request time; it is
// retried like a network error.
type timeoutError struct{ d time.Duration }

func (e *timeoutError) Error() string   { return "the model did not answer within " + e.d.String() }
func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return true }

type retryAfterKey struct{}

// retryAfterRecorder notes a response's Retry-After in the request
// context's slot, since the SDK's APIError does not carry headers.
type retryAfterRecorder struct{ next http.RoundTripper }

func (r retryAfterRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err == nil {
		if slot, ok := req.Context().Value(retryAfterKey{}).(*atomic.Int64); ok {
			slot.Store(int64(retryAfter(resp.Header.Get("Retry-After"), time.Now())))
		}
	}
	return resp, err
}
