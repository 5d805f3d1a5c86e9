package socket

import "github.com/toolwarden/toolwarden/approvals"

// The requests' operations.
const (
	OpList   = "list"
	OpDecide = "decide"
	// OpWatch turns the connection into a stream of Responses with Event
	// set: every waiting call, then each change.
	OpWatch = "watch"
)

// Request is one line a client sends.
type Request struct {
	Op string `json:"op"`
	// ID and Digest name the call a decision is for: both must match the
	// waiting call's.
	ID      string `json:"id,omitempty"`
	Digest  string `json:"digest,omitempty"`
	Approve bool   `json:"approve,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Response is one line the server sends.
type Response struct {
	OK       bool                `json:"ok"`
	Error    string              `json:"error,omitempty"`
	Requests []approvals.Request `json:"requests,omitempty"`
	Event    *approvals.Event    `json:"event,omitempty"`
}
