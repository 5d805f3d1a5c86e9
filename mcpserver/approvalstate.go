package mcpserver

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"
)

// approvalState is what a 2026-07-28 client echoes back with the human's
// answer. It is signed, so a client can neither forge it nor move an
// answer onto other arguments, and single-use, so one answer runs one call.
type approvalState struct {
	Tool    string `json:"t"`
	Digest  string `json:"d"`
	Session string `json:"s"`
	// Identity is whose limits were charged when the call asked, and
	// Bytes how many bytes of arguments: the retry that brings the answer
	// is not charged again, so it must be the same identity's and no
	// larger.
	Identity string    `json:"i"`
	Bytes    int64     `json:"b"`
	Expires  time.Time `json:"e"`
	// Approval names the approval request (guard.Ticket.ApprovalID), so
	// that the retry's audit lines name the request they answer.
	Approval string `json:"a"`
	Nonce    string `json:"n"`
}

// stateSigner signs request states. Alone, a process signs with a key of
// its own, so an answer is honoured only by the process that asked;
// replicas share cluster.secret_env's key and mark answers used in Redis,
// so that the retry may land on any of them.
type stateSigner struct {
	key []byte
	// shared, when set, marks nonces used for every replica.
	shared SingleUse

	mu   sync.Mutex
	used map[string]time.Time // nonce → expiry
}

// SingleUse marks tokens used across replicas (clusterstate.Client): it
// reports false when one was used before, and an error when it cannot
// tell, in which case the token is not honoured.
type SingleUse interface {
	Consume(nonce string, until time.Time) (bool, error)
}

func newStateSigner() *stateSigner {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return &stateSigner{key: key, used: map[string]time.Time{}}
}

// sharedStateSigner makes approval answers valid on every replica that
// holds key, used once across them all through used.
func sharedStateSigner(key []byte, used SingleUse) *stateSigner {
	return &stateSigner{key: key, shared: used, used: map[string]time.Time{}}
}

var errBadState = errors.New("approval state is not one this server signed")

// b64 decodes strictly: one token has one spelling.
var b64 = base64.RawURLEncoding.Strict()

func (s *stateSigner) sign(st approvalState) string {
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	st.Nonce = base64.RawURLEncoding.EncodeToString(nonce)
	body, _ := json.Marshal(st)
	b := base64.RawURLEncoding.EncodeToString(body)
	return b + "." + base64.RawURLEncoding.EncodeToString(s.mac(b))
}

func (s *stateSigner) open(token string) (approvalState, error) {
	b, sig, ok := strings.Cut(token, ".")
	got, err := b64.DecodeString(sig)
	if !ok || err != nil || !hmac.Equal(got, s.mac(b)) {
		return approvalState{}, errBadState
	}
	body, err := b64.DecodeString(b)
	if err != nil {
		return approvalState{}, errBadState
	}
	var st approvalState
	if err := json.Unmarshal(body, &st); err != nil || st.Nonce == "" {
		return approvalState{}, errBadState
	}
	return st, nil
}

func (s *stateSigner) mac(b string) []byte {
	h := hmac.New(sha256.New, s.key)
	h.Write([]byte("toolwarden approval state v1\x00" + b))
	return h.Sum(nil)
}

// consume marks a state used; it reports false when it already was.
// Used nonces are kept until their state expires, after which the state
// is refused anyway. Replicas ask the shared store; when it cannot be
// reached the answer is not honoured (the retry is then charged, and
// refused, like any call while the store is down).
func (s *stateSigner) consume(st approvalState) bool {
	if s.shared != nil {
		ok, err := s.shared.Consume(st.Nonce, st.Expires)
		return ok && err == nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for n, exp := range s.used {
		if now.After(exp) {
			delete(s.used, n)
		}
	}
	if _, seen := s.used[st.Nonce]; seen {
		return false
	}
	s.used[st.Nonce] = st.Expires
	return true
}
