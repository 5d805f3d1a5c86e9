package bridge

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genai"
)

// Retry is the policy for transient model errors: 429, 500 and 503
// responses and network errors are retried with exponential backoff and
// jitter, waiting at least what the server asked for (Retry-After or
// a google.rpc.RetryInfo detail).
type Retry struct {
	Attempts int           // total attempts, including the first
	Base     time.Duration // backoff before the second attempt
	Max      time.Duration // cap on one wait
	// MaxAfter is the longest wait a server may ask for (Retry-After,
	// RetryInfo); asked more, the request fails at once rather than hang.
	// 0: two minutes.
	MaxAfter time.Duration
	// Sleep waits for d or until ctx ends; tests replace it to run fast.
	Sleep func(ctx context.Context, d time.Duration) error
}

// DefaultRetry is five attempts, starting at one second, capped at 30 s;
// a server may ask for up to two minutes.
func DefaultRetry() Retry {
	return Retry{Attempts: 5, Base: time.Second, Max: 30 * time.Second, Sleep: sleepCtx}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Do runs op until it succeeds, fails permanently, or the attempts are
// spent. after returns what the server asked to wait, if anything.
func (r Retry) Do(ctx context.Context, op func(ctx context.Context) error, after func() time.Duration) error {
	var err error
	for attempt := 1; ; attempt++ {
		if err = op(ctx); err == nil || !Retryable(err) || ctx.Err() != nil {
			return err
		}
		if attempt >= r.Attempts {
			return fmt.Errorf("giving up after %d attempts: %w", attempt, err)
		}
		wait := r.backoff(attempt)
		if a := after(); a > r.maxAfter() {
			return fmt.Errorf("the server asks to wait %s before retrying, more than %s: %w", a.Round(time.Second), r.maxAfter(), err)
		} else if a > wait {
			wait = a
		}
		if serr := r.Sleep(ctx, wait); serr != nil {
			return serr
		}
	}
}

func (r Retry) maxAfter() time.Duration {
	if r.MaxAfter <= 0 {
		return 2 * time.Minute
	}
	return r.MaxAfter
}

// backoff is Base·2^(attempt-1), capped at Max, jittered to a random
// wait between half and all of it ("equal jitter").
func (r Retry) backoff(attempt int) time.Duration {
	d := r.Base << (attempt - 1)
	if d <= 0 || d > r.Max {
		d = r.Max
	}
	return d/2 + rand.N(d/2+1)
}

// Retryable reports whether err is a transient model error.
func Retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var apiErr genai.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code == http.StatusTooManyRequests || apiErr.Code == http.StatusInternalServerError ||
			apiErr.Code == http.StatusServiceUnavailable
	}
	var netErr net.Error
	return errors.As(err, &netErr)
}

// retryAfter parses a Retry-After header: seconds or an HTTP date.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(h); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// retryInfoDelay reads the delay of a google.rpc.RetryInfo error detail
// ("retryDelay": "2s"), which the Gemini API sends with 429s.
func retryInfoDelay(err error) time.Duration {
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) {
		return 0
	}
	for _, d := range apiErr.Details {
		if s, ok := d["retryDelay"].(string); ok {
			if v, perr := time.ParseDuration(s); perr == nil && v > 0 {
				return v
			}
		}
	}
	return 0
}
