package egress

import (
	"errors"
	"fmt"
)

// refusalError is a connection the proxy refused or cut, by a rule.
type refusalError struct {
	Rule   string
	Reason string
}

func (e *refusalError) Error() string {
	return fmt.Sprintf("toolwarden egress: %s (%s)", e.Reason, e.Rule)
}

func refusal(rule, format string, args ...any) error {
	return &refusalError{Rule: rule, Reason: fmt.Sprintf(format, args...)}
}

// ruleOf is the rule of a refusal, or fallback for any other error.
func ruleOf(err error, fallback string) string {
	if r, ok := errors.AsType[*refusalError](err); ok {
		return r.Rule
	}
	return fallback
}
