package jsonrpcstrict

import (
	"bytes"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// checker is the reusable state of one Check: the strict decoder (exact
// duplicate names and invalid UTF-8 refused, its defaults) and one set of
// folded names per open object.
type checker struct {
	msg   []byte
	dec   *jsontext.Decoder
	names []map[string]struct{}
}

var checkers = sync.Pool{New: func() any {
	return &checker{dec: jsontext.NewDecoder(bytes.NewReader(nil))}
}}

func getChecker() *checker { return checkers.Get().(*checker) }

func putChecker(c *checker) {
	c.msg = nil
	c.dec.Reset(bytes.NewReader(nil))
	checkers.Put(c)
}

// value reads one whole value token by token and returns its exact bytes.
// In every object it refuses two names that encoding/json would take for
// the same struct field (equal under its case folding, "name" and "NAME"),
// since which one wins is exactly where parsers differ; it also bounds the
// nesting depth.
func (c *checker) value() (jsontext.Value, error) {
	start := c.dec.InputOffset()
	base := c.dec.StackDepth()
	for {
		kind := c.dec.PeekKind()
		if kind == '"' && c.atName() {
			tok, err := c.dec.ReadToken()
			if err != nil {
				return nil, err
			}
			if err := c.addName(tok.String()); err != nil {
				return nil, err
			}
			continue
		}
		if _, err := c.dec.ReadToken(); err != nil {
			return nil, err
		}
		switch kind {
		case '{':
			c.openObject()
		case '}':
			c.names = c.names[:len(c.names)-1]
		}
		if c.dec.StackDepth() > MaxDepth {
			return nil, invalid("nesting deeper than 64 levels")
		}
		if c.dec.StackDepth() == base {
			end := c.dec.InputOffset()
			return jsontext.Value(bytes.TrimLeft(c.msg[start:end], " \t\r\n:,")), nil
		}
	}
}

// atName reports whether the next token is an object member's name.
func (c *checker) atName() bool {
	kind, n := c.dec.StackIndex(c.dec.StackDepth())
	return kind == '{' && n%2 == 0
}

func (c *checker) openObject() {
	d := len(c.names)
	if d < cap(c.names) {
		c.names = c.names[:d+1]
		if c.names[d] == nil {
			c.names[d] = map[string]struct{}{}
		}
		clear(c.names[d])
		return
	}
	c.names = append(c.names, map[string]struct{}{})
}

// addName records name in the innermost object, refusing a fold twin.
func (c *checker) addName(name string) error {
	set := c.names[len(c.names)-1]
	key := fold(name)
	if _, dup := set[key]; dup {
		return invalid("member " + quote(name) + " collides with another name of its object that differs only in case or Unicode folding")
	}
	set[key] = struct{}{}
	return nil
}

// fold maps names equal under encoding/json's matching (bytes.EqualFold,
// Unicode simple folding) to one key: each rune to the lower case of the
// smallest rune of its fold orbit. Lower-case ASCII names, the usual ones,
// are their own key.
func fold(name string) string {
	plain := true
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			plain = false
			break
		}
	}
	if plain {
		return name
	}
	out := make([]byte, 0, len(name))
	for _, r := range name {
		out = utf8.AppendRune(out, unicode.ToLower(foldRune(r)))
	}
	return string(out)
}

// foldRune returns the smallest rune of r's simple-fold orbit.
func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}
