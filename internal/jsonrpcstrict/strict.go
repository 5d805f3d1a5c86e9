// Package jsonrpcstrict checks one raw JSON-RPC 2.0 message strictly before
// a lenient decoder sees it.
//
// mcp-go decodes messages with encoding/json, which matches member names
// case-insensitively and by Unicode folding ("Method", a long-s "paramſ"),
// lets the last of duplicated members win, takes an object as an id and
// rounds numeric ids to float64. In a security boundary that is a parser
// differential: what a proxy in front inspects is not what the server runs.
// Check refuses every message on which two reasonable JSON parsers could
// disagree, so that the lenient decoder behind it only ever sees messages
// it reads the same way as a strict one.
package jsonrpcstrict

import (
	"bytes"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// Kind tells requests, notifications and responses apart.
type Kind int

// The kinds of message.
const (
	Request Kind = iota + 1
	Notification
	Response
)

// Message is what Check learnt of a valid message. ID and Params alias the
// checked bytes.
type Message struct {
	Kind   Kind
	Method string         // requests and notifications
	ID     jsontext.Value // requests and responses, exactly as sent
	Params jsontext.Value // nil when absent
}

// MaxDepth bounds the nesting of objects and arrays in a message, the
// top-level object counting as one: no MCP message needs more, and deep
// nesting only costs the recursive code behind.
const MaxDepth = 64

// members are the names a JSON-RPC 2.0 message may carry, and nothing
// else (an unknown name might be one a lenient decoder folds onto a known
// one), each a bit of the set of members a message has.
var members = map[string]memberSet{"jsonrpc": hasJSONRPC, "id": hasID, "method": hasMethod, "params": hasParams, "result": hasResult, "error": hasError}

// memberSet is a set of the members a message has.
type memberSet uint8

const (
	hasJSONRPC memberSet = 1 << iota
	hasID
	hasMethod
	hasParams
	hasResult
	hasError
)

func (s memberSet) has(m memberSet) bool { return s&m != 0 }

// Check validates msg, one JSON-RPC 2.0 message. A violation is an *Error
// carrying the JSON-RPC code and the id to answer with.
func Check(msg []byte) (Message, error) {
	c := getChecker()
	defer putChecker(c)
	c.msg = msg
	c.dec.Reset(bytes.NewBuffer(msg)) // parsed in place, without a copy
	var m Message
	if err := c.message(&m); err != nil {
		return Message{}, fail(err, m.ID)
	}
	return m, nil
}

// message reads the top-level object member by member.
func (c *checker) message(m *Message) error {
	switch k := c.dec.PeekKind(); k {
	case '{':
	case '[':
		return invalid("batch arrays are not supported (MCP has no JSON-RPC batching)")
	default:
		// A syntax error is a parse error first.
		if _, err := c.dec.ReadValue(); err != nil {
			return err
		}
		return invalid("a message must be a JSON object")
	}
	if _, err := c.dec.ReadToken(); err != nil {
		return err
	}
	var seen memberSet
	for c.dec.PeekKind() != '}' {
		tok, err := c.dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String()
		bit, ok := members[name]
		if !ok {
			return invalid("unknown member " + quote(name) + " (member names are exact: jsonrpc, id, method, params, result, error)")
		}
		seen |= bit
		if err := c.member(name, m); err != nil {
			return err
		}
	}
	if _, err := c.dec.ReadToken(); err != nil {
		return err
	}
	if _, err := c.dec.ReadToken(); err != io.EOF {
		return syntax("trailing data after the message")
	}
	return classify(m, seen)
}

// member reads the value of one top-level member into m.
func (c *checker) member(name string, m *Message) error {
	switch name {
	case "jsonrpc":
		tok, err := c.dec.ReadToken()
		if err != nil {
			return err
		}
		if tok.Kind() != '"' || tok.String() != "2.0" {
			return invalid(`"jsonrpc" must be exactly "2.0"`)
		}
	case "method":
		tok, err := c.dec.ReadToken()
		if err != nil {
			return err
		}
		if tok.Kind() != '"' {
			return invalid(`"method" must be a string`)
		}
		m.Method = tok.String()
	case "id":
		id, err := c.id()
		if err != nil {
			return err
		}
		m.ID = id
	default: // params, result, error
		kind := c.dec.PeekKind()
		v, err := c.value()
		if err != nil {
			return err
		}
		if kind != '{' {
			return invalid(quote(name) + " must be an object")
		}
		if name == "params" {
			m.Params = v
		}
	}
	return nil
}

// classify tells the kind of message from its members.
func classify(m *Message, seen memberSet) error {
	if !seen.has(hasJSONRPC) {
		return invalid(`"jsonrpc": "2.0" is missing`)
	}
	if seen.has(hasMethod) {
		if seen.has(hasResult) || seen.has(hasError) {
			return invalid(`a message with "method" carries no "result" or "error"`)
		}
		m.Kind = Notification
		if seen.has(hasID) {
			m.Kind = Request
		}
		if m.Kind == Request && string(m.ID) == "null" {
			return invalid(`a request's "id" must be a string or an integer, not null`)
		}
		return nil
	}
	if seen.has(hasParams) {
		return invalid(`"params" without "method"`)
	}
	if !seen.has(hasID) || seen.has(hasResult) == seen.has(hasError) {
		return invalid(`a message needs "method", or "id" and exactly one of "result" and "error"`)
	}
	if seen.has(hasResult) && string(m.ID) == "null" {
		return invalid(`only an error response may carry a null "id"`)
	}
	m.Kind = Response
	return nil
}

// fail turns err into an *Error answering id, if id was valid.
func fail(err error, id jsontext.Value) *Error {
	e := asError(err)
	if e.ID == nil {
		e.ID = id
	}
	return e
}

func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	b, _ := jsontext.AppendQuote(nil, s)
	return string(b)
}
