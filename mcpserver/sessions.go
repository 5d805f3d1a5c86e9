package mcpserver

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
)

// sessionPrefix marks the session IDs this server issued.
const sessionPrefix = "tw-"

// sessionIDs issues unguessable session IDs and accepts only the ones it
// issued and has not terminated. (mcp-go's default manager accepts any
// well-formed ID, including one a client invents.)
type sessionIDs struct {
	mu   sync.Mutex
	live map[string]struct{}
	max  int
}

func newSessionIDs(max int) *sessionIDs {
	return &sessionIDs{live: map[string]struct{}{}, max: max}
}

var errUnknownSession = errors.New("unknown session id")

// Generate returns a new 256-bit random session ID.
func (m *sessionIDs) Generate() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	id := sessionPrefix + hex.EncodeToString(b[:])
	m.mu.Lock()
	m.live[id] = struct{}{}
	m.mu.Unlock()
	return id
}

// Validate accepts only live IDs this manager issued.
func (m *sessionIDs) Validate(id string) (bool, error) {
	if !strings.HasPrefix(id, sessionPrefix) {
		return false, errUnknownSession
	}
	m.mu.Lock()
	_, ok := m.live[id]
	m.mu.Unlock()
	if !ok {
		return false, errUnknownSession
	}
	return false, nil
}

// Terminate forgets an ID; later requests with it are rejected.
func (m *sessionIDs) Terminate(id string) (bool, error) {
	m.mu.Lock()
	delete(m.live, id)
	m.mu.Unlock()
	return false, nil
}

// full reports whether no more sessions may be opened.
func (m *sessionIDs) full() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.live) >= m.max
}
