package mcpserver

import (
	"bytes"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// unanswered holds the ids of the requests passed on to mcp-go that have
// no answer yet. A client ends a stdio session by closing its input, and
// may do so right after its last request (a script piping requests in):
// the end of input is held back until those requests are answered, else
// mcp-go would cancel them and answer "canceled".
type unanswered struct {
	mu  sync.Mutex
	ids map[string]int
}

// drainPoll is how often the end of input looks again; drainLimit bounds
// the wait, should an answer never be recognised.
const (
	drainPoll  = 5 * time.Millisecond
	drainLimit = 10 * time.Minute
)

// asked notes a request passed on, by its id as sent.
func (u *unanswered) asked(id jsontext.Value) {
	key, ok := idKey(id)
	if !ok {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.ids == nil {
		u.ids = map[string]int{}
	}
	u.ids[key]++
}

// wrote notes msg, a message going out, as the answer to a request when
// it is one. Only the head of msg is read: mcp-go writes the id before
// the result.
func (u *unanswered) wrote(msg []byte) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.ids) == 0 {
		return
	}
	key, ok := answerID(msg)
	if !ok || u.ids[key] == 0 {
		return
	}
	if u.ids[key]--; u.ids[key] == 0 {
		delete(u.ids, key)
	}
}

func (u *unanswered) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.ids)
}

// wait returns once every request passed on has its answer, or after
// limit.
func (u *unanswered) wait(limit time.Duration) {
	for deadline := time.Now().Add(limit); u.count() > 0 && time.Now().Before(deadline); {
		time.Sleep(drainPoll)
	}
}

// answerID reads the id of a response (a member "result" or "error"
// beside it); false for requests, notifications and anything unreadable.
func answerID(msg []byte) (string, bool) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(msg))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return "", false
	}
	var key string
	var answer bool
	for dec.PeekKind() == '"' && (key == "" || !answer) {
		name, err := dec.ReadToken()
		if err != nil {
			return "", false
		}
		switch name.String() {
		case "id":
			v, err := dec.ReadValue()
			if err != nil {
				return "", false
			}
			if key, _ = idKey(v); key == "" {
				return "", false
			}
			continue
		case "result", "error":
			answer = true
		case "method":
			return "", false
		}
		if key == "" || !answer {
			if err := dec.SkipValue(); err != nil {
				return "", false
			}
		}
	}
	return key, key != "" && answer
}

// idKey is an id's identity whatever its spelling: a string's value, or
// an integer's digits (jsonrpcstrict admits no other numbers).
func idKey(id jsontext.Value) (string, bool) {
	switch id.Kind() {
	case '"':
		tok, err := jsontext.NewDecoder(bytes.NewReader(id)).ReadToken()
		if err != nil {
			return "", false
		}
		return "s:" + tok.String(), true
	case '0':
		return "n:" + string(id), true
	}
	return "", false
}
