package oauth

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

// ResourceMetadata is the protected-resource metadata of RFC 9728, the
// document an MCP client reads to learn which authorization server issues
// tokens for this server.
type ResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

// MetadataPath is where the metadata is served; RFC 9728 puts a
// resource's path after it (…/oauth-protected-resource/mcp), and clients
// also try the bare form.
const MetadataPath = "/.well-known/oauth-protected-resource"

// Metadata is this resource's metadata; scopes are every scope it knows
// of (those required, and those identity rules name).
func (v *Verifier) Metadata(scopes []string) ResourceMetadata {
	return ResourceMetadata{
		Resource: v.cfg.Audience, AuthorizationServers: []string{v.cfg.Issuer},
		ScopesSupported: scopes, BearerMethodsSupported: []string{"header"}, ResourceName: "toolwarden",
	}
}

// MetadataHandler serves m as JSON to any origin: it is public, and
// browser-based clients read it cross-origin.
func MetadataHandler(m ResourceMetadata) http.Handler {
	body, _ := json.Marshal(m)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Cache-Control", "max-age=300")
		_, _ = w.Write(body)
	})
}

// Challenge is the answer to a request refused for err (nil: it carried
// no token): 401 with the invalid_token error, or 403 insufficient_scope
// naming the scopes needed, each with the WWW-Authenticate header that
// points the client at metadataURL (RFC 6750, RFC 9728).
func Challenge(metadataURL string, err error, scopes []string) (status int, header string) {
	h := `Bearer resource_metadata="` + metadataURL + `"`
	switch {
	case errors.Is(err, ErrInsufficientScope):
		return http.StatusForbidden, h + `, error="insufficient_scope", scope="` + quoteSafe(strings.Join(scopes, " ")) + `"`
	case err != nil:
		return http.StatusUnauthorized, h + `, error="invalid_token", error_description="` + quoteSafe(describe(err)) + `"`
	}
	return http.StatusUnauthorized, h
}

// describe is the reason of err, without the error code before it.
func describe(err error) string {
	s := err.Error()
	if _, after, ok := strings.Cut(s, ": "); ok {
		s = after
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// quoteSafe keeps a header's quoted-string to printable ASCII other than
// the quote and backslash (RFC 6750 §3).
func quoteSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '\''
		}
		return r
	}, s)
}
