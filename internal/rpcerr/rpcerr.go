// Package rpcerr lets a request's handler answer it with a JSON-RPC error
// of its own (code, message, data) where mcp-go v1.2.1 cannot: a tool
// handler's error becomes -32603 with no data there, and toolwarden's
// guard makes it a tool result besides. Protocol 2026-07-28 asks for
// errors that carry data, such as MissingRequiredClientCapabilityError
// (-32021, whose data names the capabilities) or -32602 for a
// requestState that fails its integrity check.
//
// The transport offers the handler a slot in the request's context
// (WithSlot); the handler fills it (Answer) and returns a tool error, which
// the guard audits as usual; the transport then writes the slot's error in
// place of the answer mcp-go made. Only code the server runs can fill the
// slot: nothing a client or an upstream tool sends reaches it.
package rpcerr

import (
	"context"
	"sync/atomic"
)

// The JSON-RPC error codes this package makes.
const (
	InvalidParams                   = -32602
	MissingRequiredClientCapability = -32021
)

// Error is the JSON-RPC error a request is answered with.
type Error struct {
	Code    int
	Message string
	Data    any // omitted when nil
}

func (e *Error) Error() string { return e.Message }

// MissingCapability is the error for a request that needs the client
// capability name (e.g. "sampling") which the client did not declare: its
// data is a ClientCapabilities object naming it, as 2026-07-28's
// MissingRequiredClientCapabilityError has it.
func MissingCapability(name string) *Error {
	return &Error{
		Code:    MissingRequiredClientCapability,
		Message: "the request needs the client capability " + name + ", which the client did not declare in _meta io.modelcontextprotocol/clientCapabilities",
		Data:    map[string]any{"requiredCapabilities": map[string]any{name: map[string]any{}}},
	}
}

// Invalid is an invalid-params error that names the rule the request broke.
func Invalid(rule, message string) *Error {
	return &Error{Code: InvalidParams, Message: message + " (rule " + rule + ")", Data: map[string]any{"rule": rule}}
}

type slot struct{ err atomic.Pointer[Error] }

type slotKey struct{}

// WithSlot returns ctx offering a slot for its request's error, and the
// function that returns the error put there (nil when none was).
func WithSlot(ctx context.Context) (context.Context, func() *Error) {
	s := &slot{}
	return context.WithValue(ctx, slotKey{}, s), s.err.Load
}

// Answer makes e the answer to ctx's request. It reports false when the
// transport offers no slot (the caller then answers as it otherwise
// would) or a first error is there already, which stays.
func Answer(ctx context.Context, e *Error) bool {
	s, ok := ctx.Value(slotKey{}).(*slot)
	return ok && e != nil && s.err.CompareAndSwap(nil, e)
}
