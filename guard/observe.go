package guard

import "github.com/toolwarden/toolwarden/audit"

// Observer is told of every audit line the guard writes: the one place
// where each decision and each end of a call is already known, so metrics
// count exactly what the audit log holds. Observe runs on the call's
// goroutine after the line was written (or failed to be); it must be
// quick and must not block.
type Observer interface {
	Observe(Event)
}

// Event is one audit line as an Observer sees it.
type Event struct {
	Entry audit.Entry
	// RedactedBy counts, on the line of a finished call, the secrets the
	// output filter redacted, by rule ID (Entry.Redactions is their sum).
	RedactedBy map[string]int
	// Err is why the line could not be written; the call was then denied
	// (audit.write) or its result withheld.
	Err error
}

// SetObserver makes o see every audit line from now on; nil sees none.
// Call it before the guard serves calls: it is not synchronized with them.
// Without an observer the guard does no extra work.
func (g *Guard) SetObserver(o Observer) { g.obs = o }
