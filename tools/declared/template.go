package declared

import (
	"fmt"

	"github.com/toolwarden/toolwarden/internal/lazyregexp"
)

// placeholder is a {param_name} inside an argv element.
var placeholder = lazyregexp.New(`\{([a-z][a-z0-9_]*)\}`)

// ArgPart is one element of a cli tool's argv template: a literal, or a
// literal Prefix and Suffix around one parameter.
type ArgPart struct {
	Prefix, Param, Suffix string
}

// Literal reports whether the element holds no placeholder.
func (a ArgPart) Literal() bool { return a.Param == "" }

// ParseArg splits one argv template element. An element holds at most one
// placeholder; anything that is not a {lower_snake_name} is literal text.
func ParseArg(elem string) (ArgPart, error) {
	m := placeholder.FindAllStringSubmatchIndex(elem, -1)
	switch len(m) {
	case 0:
		return ArgPart{Prefix: elem}, nil
	case 1:
		return ArgPart{Prefix: elem[:m[0][0]], Param: elem[m[0][2]:m[0][3]], Suffix: elem[m[0][1]:]}, nil
	}
	return ArgPart{}, fmt.Errorf("%q holds %d placeholders; an argument holds at most one, so each value stays one argument", elem, len(m))
}
