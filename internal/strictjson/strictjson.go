// Package strictjson decodes the JSON bodies that cross a trust boundary
// (a signed webhook callback, an identity provider's answers, a token's
// claims) as strictly as internal/jsonrpcstrict checks JSON-RPC messages.
//
// encoding/json matches member names case-insensitively and lets the last
// of duplicated members win: a signed {"action":"deny","Action":"approve"}
// approved a call, because the signer's reader and the server's disagreed
// on which member counted. Here the decoder is go-json-experiment/json
// (the encoding/json/v2 design) with its strict defaults kept: member names
// match exactly, a duplicated name is an error, invalid UTF-8 is an
// error, and nothing may follow the value.
package strictjson

import (
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Errors a refusal wraps, for callers that answer each differently.
var (
	ErrDuplicateMember = errors.New("duplicate member name")
	ErrUnknownMember   = errors.New("unknown member name")
)

// Unmarshal decodes data into v, refusing any member v has no field for:
// for bodies whose whole schema is toolwarden's own, where an unknown
// name is a mistake or a probe ("Action" beside "action").
func Unmarshal(data []byte, v any) error {
	return explain(json.Unmarshal(data, v, json.RejectUnknownMembers(true)))
}

// UnmarshalOpen decodes data into v as Unmarshal does, but skips members
// v has no field for: for documents of other parties (a provider's
// metadata, an introspection answer) that carry more than is read. A
// member that differs from a field's name only in case is such an
// unknown member, never the field.
func UnmarshalOpen(data []byte, v any) error {
	return explain(json.Unmarshal(data, v))
}

// explain words the decoder's refusal as the rule broken.
func explain(err error) error {
	var serr *json.SemanticError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jsontext.ErrDuplicateName):
		return fmt.Errorf("%w (a name appears once in an object): %v", ErrDuplicateMember, err)
	case errors.As(err, &serr) && serr.Err == json.ErrUnknownName:
		return fmt.Errorf("%w %q at %q (names are exact: case matters)", ErrUnknownMember,
			serr.JSONPointer.LastToken(), serr.JSONPointer)
	}
	return err
}
