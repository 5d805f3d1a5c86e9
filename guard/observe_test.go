package guard

import (
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/fakesecret"
)

// recorder is an Observer that keeps what it sees.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) Observe(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// The observer sees every audit line as written, in order, with the
// redactions of a finished call by rule.
func TestObserverSeesEveryAuditLine(t *testing.T) {
	audit, rec := &memAuditor{}, &recorder{}
	g := newTestGuard(t, audit, roomyLimits)
	g.SetObserver(rec)
	secrets := fakesecret.All(30)
	text := secrets[0].Line + "\n" + secrets[0].Line + "\n" + secrets[1].Line
	serve(g, readCall(t), func() (*mcp.CallToolResult, error) { return mcp.NewToolResultText(text), nil })
	_, denial := g.Admit(Call{Tool: "read_file", Session: "s", Args: decodeJSON(t, `{"path":"../outside"}`)})
	require.NotNil(t, denial)

	entries := audit.all()
	require.Len(t, rec.events, len(entries))
	for i, ev := range rec.events {
		require.Equal(t, entries[i], ev.Entry, "event %d is the audit line", i)
		require.NoError(t, ev.Err)
	}
	finished := rec.events[1]
	require.Equal(t, OutcomeCompleted, finished.Entry.Outcome)
	want := map[string]int{secrets[0].Rule: 2}
	want[secrets[1].Rule]++
	require.Equal(t, want, finished.RedactedBy)
	require.Equal(t, 3, finished.Entry.Redactions)
	require.Equal(t, Deny, rec.events[2].Entry.Outcome)
}

// A line that cannot be written reaches the observer with its error.
func TestObserverSeesAuditErrors(t *testing.T) {
	rec := &recorder{}
	g := newTestGuard(t, &failingAuditor{}, roomyLimits)
	g.SetObserver(rec)
	_, denial := g.Admit(readCall(t))
	require.NotNil(t, denial)
	require.Len(t, rec.events, 1)
	require.ErrorIs(t, rec.events[0].Err, errDiskFull)
}
