package page

import (
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/approvals"
)

// otherReplica is a fleet with one call waiting on another replica.
type otherReplica struct {
	req approvals.Request

	mu      sync.Mutex
	decided []approvals.Decision
}

func (o *otherReplica) Share(approvals.Event)        {}
func (o *otherReplica) Waiting() []approvals.Request { return []approvals.Request{o.req} }
func (o *otherReplica) Decide(id, digest string, d approvals.Decision) error {
	if id != o.req.ID || digest != o.req.Digest {
		return approvals.ErrUnknown
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.decided = append(o.decided, d)
	return nil
}

// TestPageDecidesACallOfAnotherReplica: with replicas sharing their
// state, the page lists a call waiting on another replica and its
// decision goes to the fleet, which delivers it there.
func TestPageDecidesACallOfAnotherReplica(t *testing.T) {
	s := serve(t)
	now := time.Now()
	other := &otherReplica{req: approvals.Request{ID: "remote1", Tool: "write_file", Digest: "digest-remote1",
		Preview: "Create file on-replica-a.txt", Created: now, Expires: now.Add(time.Minute)}}
	s.hub.SetFleet(other)

	res, err := s.browser.Get(s.base)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, string(body), "Create file on-replica-a.txt")

	code, msg := s.post(t, s.origin, s.form(other.req, "approve"))
	require.Equal(t, http.StatusSeeOther, code, msg)
	require.Len(t, other.decided, 1)
	require.Equal(t, approvals.Decision{Approve: true, Channel: "page", By: "page"}, other.decided[0])
}
