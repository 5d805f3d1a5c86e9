package graph

import (
	"context"
	"errors"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

const retryHint = "Retry in a moment; if it keeps failing, tell the operator (`toolwarden config check` shows the graph backend's state)."

// mapError turns what a transaction returned into the error the model
// sees. Errors the tools raised pass through; driver failures are
// classified without exposing server internals. Anything that is not a
// Neo4j error or a misuse of the driver means the server could not be
// reached or answered no more.
func mapError(ctx context.Context, err error) error {
	var te *toolerr.Error
	if errors.As(err, &te) {
		return te
	}
	if e := contextError(ctx, err); e != nil {
		return e
	}
	var limit *neo4j.TransactionExecutionLimit
	if errors.As(err, &limit) && len(limit.Errors) > 0 {
		// The driver gave up retrying; what matters is the last failure.
		return mapError(ctx, limit.Errors[len(limit.Errors)-1])
	}
	var ne *neo4j.Neo4jError
	if errors.As(err, &ne) {
		return mapNeo4jError(err, ne.Code)
	}
	var ue *neo4j.UsageError
	if errors.As(err, &ue) {
		return toolerr.As(err)
	}
	return unavailable(err, "Neo4j cannot be reached")
}

func contextError(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return toolerr.Wrap(err, toolerr.Timeout, "Retry once; if it times out again, tell the operator.",
			"the graph query did not finish before the call's deadline").WithRule("limits.call_timeout")
	case errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled):
		return toolerr.Wrap(err, toolerr.Canceled, "", "the call was cancelled")
	}
	return nil
}

// mapNeo4jError classifies a server error by its status code,
// Neo.<Classification>.<Category>.<Title>.
func mapNeo4jError(err error, code string) error {
	switch {
	case strings.HasPrefix(code, "Neo.ClientError.Security."):
		return unavailable(err, "Neo4j refused toolwarden's credentials")
	case strings.HasPrefix(code, "Neo.ClientError.Transaction.TransactionTimedOut"):
		return toolerr.Wrap(err, toolerr.Timeout, "Retry once; if it times out again, tell the operator.",
			"the graph query ran longer than graph.query_timeout").WithRule("graph.query_timeout")
	case code == "Neo.ClientError.Schema.ConstraintValidationFailed":
		return toolerr.Wrap(err, toolerr.Conflict, "Retry the call.",
			"another write created the same node at the same time").WithRule("graph.unique_id")
	case strings.HasPrefix(code, "Neo.TransientError."),
		strings.HasPrefix(code, "Neo.ClientError.Database."),
		strings.HasPrefix(code, "Neo.ClientError.Cluster."):
		return unavailable(err, "Neo4j is busy or its database is unavailable")
	}
	return toolerr.As(err)
}

func unavailable(cause error, msg string) error {
	return toolerr.Wrap(cause, toolerr.BackendUnavailable, retryHint, "%s; the graph tools cannot work until it is back", msg).
		WithRule("graph.backend")
}
