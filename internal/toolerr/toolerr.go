// Package toolerr defines the coded errors that reach the model.
//
// Anything the model or the user can act on (a denial, a bad argument, a
// missing file, a limit) is an *Error with a stable Code, a Message that names
// the rule and a Hint that says what to do instead. The MCP layer turns it
// into a tool result with isError set; everything else is a bug or a protocol
// fault.
package toolerr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Code is a stable, dotted error code such as "denied.not_allowed".
type Code string

// The codes toolwarden returns. Their strings are part of the public contract.
const (
	DeniedNotAllowed     Code = "denied.not_allowed"
	DeniedCapability     Code = "denied.capability"
	InvalidArgument      Code = "invalid_argument"
	InvalidSchema        Code = "invalid_argument.schema"
	PathOutsideWorkspace Code = "invalid_argument.path_outside_workspace"
	PathInvalid          Code = "invalid_argument.path_invalid"
	PathSymlinkEscape    Code = "invalid_argument.path_symlink_escape"
	NotFound             Code = "not_found"
	AlreadyExists        Code = "already_exists"
	NotAFile             Code = "invalid_argument.not_a_file"
	NotADirectory        Code = "invalid_argument.not_a_directory"
	BinaryFile           Code = "invalid_argument.binary_file"
	TooLarge             Code = "limit.too_large"
	LimitExceeded        Code = "limit.exceeded"
	Timeout              Code = "limit.timeout"
	RateLimited          Code = "limit.rate"
	BudgetExceeded       Code = "limit.budget"
	Canceled             Code = "canceled"
	// Abandoned: too many of the identity's calls outlived their deadline
	// and still run (limits.max_abandoned).
	Abandoned Code = "limit.abandoned"
	// Sandboxed execution.
	InvalidInterpreter Code = "invalid_argument.interpreter"
	FlagNotAllowed     Code = "invalid_argument.flag_not_allowed"
	SandboxFailed      Code = "sandbox.failed"
	EditNoMatch        Code = "edit.no_match"
	EditAmbiguous      Code = "edit.ambiguous_match"
	Internal           Code = "internal"
	// IO: the disk under the workspace failed the operation (full, read-only,
	// an I/O error); nothing was half-written, and it may work later.
	IO Code = "io"
	// AuditWrite: the call's audit line could not be written (a full or
	// failing audit volume), so it was not run; it may succeed later.
	AuditWrite Code = "audit.write"
	// DeniedSession: an HTTP session was used with another identity's
	// credentials (audited; the client only sees an unknown session).
	DeniedSession Code = "denied.session"
	// Human approval (MCP elicitation).
	DeniedApprovalUnavailable Code = "denied.approval_unavailable"
	DeniedApprovalDeclined    Code = "denied.approval_declined"
	DeniedApprovalTimeout     Code = "denied.approval_timeout"
	// DeniedToolDrift: an upstream tool's definition changed since it
	// was pinned (upstream_pins); the operator re-pins after review.
	DeniedToolDrift Code = "denied.tool_drift"
	// DeniedArgumentSecret: a secret in the arguments of a tool that
	// sends them out (arguments.secrets); DeniedArgumentMarker: an
	// injection marker, invisible or control character in free-text
	// arguments (arguments.markers: refuse); DeniedArgument: the
	// arguments could not be scanned.
	DeniedArgumentSecret Code = "denied.argument_secret"
	DeniedArgumentMarker Code = "denied.argument_marker"
	DeniedArgument       Code = "denied.argument_scan"
	// BackendUnavailable: a service behind a toolset (the artifact store,
	// the graph database) cannot be reached; the same call may succeed later.
	BackendUnavailable Code = "backend.unavailable"
	// BackendDenied: the service refused toolwarden's own credentials.
	BackendDenied Code = "backend.denied"
	InvalidUUID   Code = "invalid_argument.uuid"
	InvalidText   Code = "invalid_argument.text"
	InvalidEnum   Code = "invalid_argument.enum"
	Cycle         Code = "conflict.cycle"
	Conflict      Code = "conflict"
	// Declared tools.
	InvalidURL Code = "invalid_argument.url"
	// UpstreamStatus: an http tool's endpoint answered with a non-2xx status.
	UpstreamStatus Code = "upstream.status"
)

// Error is an error the model can act on.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	// Rule names the policy rule or check that produced the error, when there is one.
	Rule string `json:"rule,omitempty"`
	// RetryAfter, when set, is how many seconds to wait before the same
	// call may succeed (a limit's window or rate bucket refills by then).
	RetryAfter int `json:"retry_after,omitempty"`
	err        error
}

// New returns an *Error with the given code, message and hint.
func New(code Code, hint, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Hint: hint}
}

// Wrap is New that keeps cause for errors.Is/As; the cause is never shown to the model.
func Wrap(cause error, code Code, hint, format string, args ...any) *Error {
	e := New(code, hint, format, args...)
	e.err = cause
	return e
}

// WithRule returns e with its Rule set.
func (e *Error) WithRule(rule string) *Error {
	e.Rule = rule
	return e
}

func (e *Error) Error() string {
	return string(e.Code) + ": " + e.Message
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.err }

// Is reports whether target is an *Error with the same code, so callers can
// write errors.Is(err, &toolerr.Error{Code: toolerr.NotFound}).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// JSON renders the error as the text the model sees.
func (e *Error) JSON() string {
	b, err := json.Marshal(e)
	if err != nil {
		return `{"code":"internal","message":"error could not be encoded"}`
	}
	return string(b)
}

// As extracts an *Error from err. A context's error is the timeout or
// cancellation it reports: a handler that gave up because its call ended
// is not at fault. Other errors that are not coded become Internal, with a
// generic message so that no internal detail leaks to the model.
func As(err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, context.DeadlineExceeded):
		return Wrap(err, Timeout, "", "the call's deadline passed before the tool finished")
	case errors.Is(err, context.Canceled):
		return Wrap(err, Canceled, "", "the call was cancelled before the tool finished")
	}
	return Wrap(err, Internal, "This is a server fault; retrying will not help. Report it to the operator.", "the tool failed unexpectedly")
}

// CodeOf returns the code of err, or "" when err is nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	return As(err).Code
}

// Quote renders untrusted input for a message: quoted, escaped and cut at
// 80 bytes, since arguments come from the model and are echoed back only
// as much as helps.
func Quote(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q…", strings.ToValidUTF8(s[:80], ""))
	}
	return fmt.Sprintf("%q", s)
}
