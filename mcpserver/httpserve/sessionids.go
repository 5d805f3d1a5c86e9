package httpserve

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// Prefixes of the session IDs this server issues: streamable HTTP's and
// legacy SSE's (whose ID opens its message endpoint).
const (
	sessionPrefix = "tw-"
	ssePrefix     = "sse-"
)

// sessionIDs issues unguessable session IDs, each bound to the owner (see
// Server.Owner) whose request created it, and accepts only the ones it
// issued and has not terminated. (mcp-go's default manager accepts any
// well-formed ID, including one a client invents, from anyone.)
type sessionIDs struct {
	mu    sync.Mutex
	owner map[string]string // live ID -> the owner that created it
	max   int
	// ownerOfRequest is Server.Owner.
	ownerOfRequest func(context.Context) string
}

func newSessionIDs(max int, owner func(context.Context) string) *sessionIDs {
	return &sessionIDs{owner: map[string]string{}, max: max, ownerOfRequest: owner}
}

var errUnknownSession = errors.New("unknown session id")

// issue returns a new 256-bit random session ID bound to owner.
func (m *sessionIDs) issue(prefix, owner string) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	id := prefix + hex.EncodeToString(b[:])
	m.mu.Lock()
	m.owner[id] = owner
	m.mu.Unlock()
	return id
}

// ownerOf returns who a live session belongs to.
func (m *sessionIDs) ownerOf(id string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	owner, ok := m.owner[id]
	return owner, ok
}

// forget ends a session; later requests with its ID are rejected.
func (m *sessionIDs) forget(id string) {
	m.mu.Lock()
	delete(m.owner, id)
	m.mu.Unlock()
}

// full reports whether no more sessions may be opened.
func (m *sessionIDs) full() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.owner) >= m.max
}

// ResolveSessionIdManager gives mcp-go the manager as r's owner sees it,
// so that the session an initialize creates is bound to the identity that
// sent it. A nil r is mcp-go itself (the idle sweeper, shutdown), which
// may terminate any session.
func (m *sessionIDs) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	if r == nil {
		return ownedSessions{ids: m}
	}
	return ownedSessions{ids: m, owner: m.ownerOfRequest(r.Context()), bound: true}
}

// ownedSessions is mcp-go's SessionIdManager for one owner: another
// owner's session is as unknown to it as an invented ID. (The HTTP
// middleware refuses such requests before mcp-go sees them; this is the
// second line.)
type ownedSessions struct {
	ids   *sessionIDs
	owner string
	bound bool
}

// Generate issues a streamable HTTP session ID for the owner.
func (o ownedSessions) Generate() string { return o.ids.issue(sessionPrefix, o.owner) }

// Validate accepts only live IDs of the owner.
func (o ownedSessions) Validate(id string) (bool, error) {
	if !o.mine(id) {
		return false, errUnknownSession
	}
	return false, nil
}

// Terminate ends one of the owner's sessions.
func (o ownedSessions) Terminate(id string) (bool, error) {
	if o.bound && !o.mine(id) {
		return false, errUnknownSession
	}
	o.ids.forget(id)
	return false, nil
}

func (o ownedSessions) mine(id string) bool {
	owner, ok := o.ids.ownerOf(id)
	return ok && (!o.bound || owner == o.owner)
}

type sseStreamKey struct{}

// generateSSE is mcp-go's SSE session ID generator: it binds the new
// session to the owner of the GET /sse request, and tells trackSSE which
// ID to forget when the stream ends.
func (m *sessionIDs) generateSSE(ctx context.Context, _ *http.Request) (string, error) {
	id := m.issue(ssePrefix, m.ownerOfRequest(ctx))
	if p, ok := ctx.Value(sseStreamKey{}).(*string); ok {
		*p = id
	}
	return id, nil
}

// trackSSE forgets an SSE session when its stream ends (mcp-go has no
// hook for it), so that its ID is unknown from then on.
func (m *sessionIDs) trackSSE(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var id string
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sseStreamKey{}, &id)))
		if id != "" {
			m.forget(id)
		}
	})
}

// SessionDigest is how the audit log names an HTTP session: a digest,
// under the prefix of its transport, as the ID itself is a credential.
func SessionDigest(id string) string {
	prefix := sessionPrefix
	if !strings.HasPrefix(id, sessionPrefix) {
		prefix = ssePrefix
	}
	sum := sha256.Sum256([]byte(id))
	return prefix + hex.EncodeToString(sum[:8])
}
