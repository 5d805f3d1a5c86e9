package jsonrpcstrict

import (
	"encoding/json"
	"errors"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// JSON-RPC 2.0 error codes Check answers with.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
)

// Error is a refused message: the JSON-RPC code, the rule broken, and the
// id to answer with (nil when the message's id is missing or invalid).
type Error struct {
	Code   int
	Reason string
	ID     jsontext.Value
}

func (e *Error) Error() string {
	if e.Code == CodeParseError {
		return "parse error: " + e.Reason
	}
	return "invalid request: " + e.Reason
}

func invalid(reason string) *Error { return &Error{Code: CodeInvalidRequest, Reason: reason} }
func syntax(reason string) *Error  { return &Error{Code: CodeParseError, Reason: reason} }

// asError turns what the strict decoder refused into an *Error. A
// duplicated member name is a valid JSON text but an invalid request.
func asError(err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, jsontext.ErrDuplicateName):
		return invalid("duplicate member name (" + err.Error() + ")")
	case errors.Is(err, io.EOF):
		return syntax("empty message")
	}
	return syntax(err.Error())
}

// Response is the JSON-RPC error response to send back, one JSON object
// without a trailing newline. The id is echoed byte for byte.
func (e *Error) Response() []byte { return ErrorResponse(e.ID, e.Code, e.Error()) }

// ErrorResponse is a JSON-RPC error response with code and message, one
// JSON object without a trailing newline: id echoed byte for byte, null
// when there is none.
func ErrorResponse(id jsontext.Value, code int, message string) []byte {
	raw := json.RawMessage(id)
	if len(raw) == 0 {
		raw = json.RawMessage("null")
	}
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", raw, rpcError{code, message}})
	return b
}
