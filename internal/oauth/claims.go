package oauth

import (
	"encoding/base64"
	"errors"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/toolwarden/toolwarden/internal/strictjson"
)

// registered are the claims whose JSON shape is checked before jwx reads
// them, each as sent.
type registered struct {
	Sub jsontext.Value `json:"sub"`
	Exp jsontext.Value `json:"exp"`
	Nbf jsontext.Value `json:"nbf"`
	Iat jsontext.Value `json:"iat"`
}

// checkClaims refuses a payload whose claims jwx would read leniently.
// RFC 7519 makes exp, nbf and iat NumericDates, JSON numbers; jwx also
// takes a digit string or an RFC 3339 date, and has no option against
// the first (WithNumericDateParsePedantic only stops the second, and
// process-wide). An empty sub passes jwx's required-claim check, yet
// every such token would be the one identity oauth:@issuer, sharing
// sessions and limits. A duplicated claim is refused as well, so that no
// reader can take another copy than jwx does.
func checkClaims(raw string) error {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return errNotJWT
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return errors.New("malformed JWT payload")
	}
	var c registered
	if err := strictjson.UnmarshalOpen(payload, &c); err != nil {
		return errors.New("malformed JWT claims: " + err.Error())
	}
	switch {
	case c.Sub == nil:
		return errors.New("the token lacks a required claim (sub)")
	case c.Sub.Kind() != '"':
		return errors.New("the token's subject is not a string (sub)")
	case strings.TrimSpace(unquote(c.Sub)) == "":
		return errors.New("the token's subject is empty (sub)")
	case c.Exp == nil:
		return errors.New("the token lacks a required claim (exp)")
	}
	names := []string{"exp", "nbf", "iat"}
	for i, v := range []jsontext.Value{c.Exp, c.Nbf, c.Iat} {
		if v != nil && v.Kind() != '0' {
			return errors.New("the token's " + names[i] + " is not a NumericDate, a JSON number of seconds (" + names[i] + ")")
		}
	}
	return nil
}

// unquote is the text of a JSON string value.
func unquote(v jsontext.Value) string {
	var s string
	if strictjson.UnmarshalOpen(v, &s) != nil {
		return ""
	}
	return s
}
