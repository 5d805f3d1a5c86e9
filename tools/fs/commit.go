package fs

import (
	"context"
	"errors"

	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// Each change a file tool makes is committed by one step (the rename of
// an atomic write, a mkdir, a rename, a remove), and the call's context is
// checked just before it: a call past its deadline, or cancelled, changes
// nothing and says so. A change committed in the instant after the check
// is reported as made, and the server audits the call as completed late.

// live returns nil while ctx is live, else the error telling that the
// change to rel was not made.
func live(ctx context.Context, rel string) error {
	return uncommitted(ctx.Err(), rel)
}

// uncommitted turns a context error, from live or from an atomic write,
// into the coded error the model receives; other errors pass unchanged.
func uncommitted(err error, rel string) error {
	code, why := toolerr.Timeout, "the call's deadline passed"
	switch {
	case errors.Is(err, context.DeadlineExceeded):
	case errors.Is(err, context.Canceled):
		code, why = toolerr.Canceled, "the call was cancelled"
	default:
		return err
	}
	return toolerr.Wrap(err, code, "Nothing was changed; check the workspace before retrying.",
		"the change to %q was not made: %s before it was committed", rel, why)
}
