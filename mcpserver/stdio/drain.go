package stdio

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
	// asking are the server's own requests to the client still unanswered.
	asking map[string]int
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

// has reports whether the request id, passed on, still lacks its answer.
func (u *unanswered) has(id jsontext.Value) bool {
	key, ok := idKey(id)
	u.mu.Lock()
	defer u.mu.Unlock()
	return ok && u.ids[key] > 0
}

// wrote notes msg, a message going out: the answer to a request passed
// on, or a request of the server's own (an elicitation), which the client
// must answer. Only the head of msg is read: mcp-go writes the id first.
func (u *unanswered) wrote(msg []byte) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.ids) == 0 {
		return
	}
	key, kind := messageHead(msg)
	switch {
	case kind == headRequest:
		if u.asking == nil {
			u.asking = map[string]int{}
		}
		u.asking[key]++
	case kind == headAnswer && u.ids[key] > 0:
		if u.ids[key]--; u.ids[key] == 0 {
			delete(u.ids, key)
		}
	}
}

// replied notes the client's answer to a request of the server's.
func (u *unanswered) replied(id jsontext.Value) {
	key, ok := idKey(id)
	u.mu.Lock()
	defer u.mu.Unlock()
	if ok && u.asking[key] > 0 {
		if u.asking[key]--; u.asking[key] == 0 {
			delete(u.asking, key)
		}
	}
}

// waiting reports whether requests passed on still lack their answer and
// none of them waits on the client, which can no longer answer once its
// input has closed (those calls are better cancelled at once).
func (u *unanswered) waiting() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.ids) > 0 && len(u.asking) == 0
}

// wait returns once every request passed on has its answer, one waits on
// the client, or after limit.
func (u *unanswered) wait(limit time.Duration) {
	for deadline := time.Now().Add(limit); u.waiting() && time.Now().Before(deadline); {
		time.Sleep(drainPoll)
	}
}

// The kinds of message messageHead tells apart.
const (
	headOther = iota
	headAnswer
	headRequest
)

// messageHead reads a message's id and whether it is an answer (a member
// "result" or "error") or a request (a "method" beside the id); headOther
// for notifications and anything unreadable.
func messageHead(msg []byte) (string, int) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(msg))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return "", headOther
	}
	key, kind := "", headOther
	for dec.PeekKind() == '"' && (key == "" || kind == headOther) {
		name, err := dec.ReadToken()
		if err != nil {
			return "", headOther
		}
		switch name.String() {
		case "id":
			v, err := dec.ReadValue()
			if err != nil {
				return "", headOther
			}
			if key, _ = idKey(v); key == "" {
				return "", headOther
			}
			continue
		case "result", "error":
			kind = headAnswer
		case "method":
			kind = headRequest
		}
		if key == "" || kind == headOther {
			if err := dec.SkipValue(); err != nil {
				return "", headOther
			}
		}
	}
	if key == "" {
		return "", headOther
	}
	return key, kind
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
