package oauth_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/oauth"
	"github.com/toolwarden/toolwarden/internal/oauth/oauthtest"
)

// TestHostileClaims: claims a real provider would not issue, signed with
// its key all the same, are refused naming the claim.
func TestHostileClaims(t *testing.T) {
	p := oauthtest.New(t)
	v := verifierFor(t, p)
	now := time.Now()
	cases := []struct {
		name  string
		edit  func(map[string]any)
		claim string
	}{
		{"empty sub", func(c map[string]any) { c["sub"] = "" }, "sub"},
		{"blank sub", func(c map[string]any) { c["sub"] = " \t" }, "sub"},
		{"numeric sub", func(c map[string]any) { c["sub"] = 42 }, "sub"},
		{"exp as a digit string", func(c map[string]any) { c["exp"] = "4102444800" }, "exp"},
		{"exp as an RFC 3339 string", func(c map[string]any) { c["exp"] = "2100-01-01T00:00:00Z" }, "exp"},
		{"nbf as a digit string", func(c map[string]any) { c["nbf"] = "0" }, "nbf"},
		{"iat as a digit string", func(c map[string]any) { c["iat"] = "1" }, "iat"},
		{"exp null", func(c map[string]any) { c["exp"] = nil }, "exp"},
		{"exp missing", func(c map[string]any) { delete(c, "exp") }, "exp"},
		{"exp a bool", func(c map[string]any) { c["exp"] = true }, "exp"},
		{"sub missing", func(c map[string]any) { delete(c, "sub") }, "sub"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := p.Claims("alice", resource)
			tc.edit(c)
			_, err := v.Verify(context.Background(), p.Sign(t, c))
			require.ErrorIs(t, err, oauth.ErrInvalidToken)
			require.ErrorContains(t, err, "("+tc.claim+")")
		})
	}
	t.Run("duplicate sub", func(t *testing.T) {
		payload := `{"iss":"` + p.URL + `","aud":"` + resource + `","sub":"alice","sub":"bob","exp":` +
			strconv.FormatInt(now.Add(time.Hour).Unix(), 10) + `}`
		_, err := v.Verify(context.Background(), p.SignPayload(t, []byte(payload)))
		require.ErrorIs(t, err, oauth.ErrInvalidToken)
		require.ErrorContains(t, err, "duplicate")
	})
	t.Run("valid", func(t *testing.T) {
		got, err := v.Verify(context.Background(), p.Sign(t, p.Claims("alice", resource)))
		require.NoError(t, err)
		require.Equal(t, "oauth:alice@"+p.URL, got.Name())
	})
}
