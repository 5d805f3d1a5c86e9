package graph

import "context"

// Runner runs units of work in managed transactions. Read runs work in a
// read transaction (with the read-only credentials when configured), Write
// in a write transaction. Transient failures are retried by the driver, so
// work may run more than once and must have no effect outside its
// transaction. Errors come back mapped: a *toolerr.Error that work returned
// is passed through, and driver failures become backend.unavailable,
// limit.timeout and the like.
type Runner interface {
	Read(ctx context.Context, work Work) (any, error)
	Write(ctx context.Context, work Work) (any, error)
}

// Work is the body of one transaction.
type Work func(ctx context.Context, tx Tx) (any, error)

// Tx runs Cypher inside one transaction.
type Tx interface {
	// Query runs one parameterised statement and returns all its records.
	Query(ctx context.Context, cypher string, params map[string]any) ([]Record, error)
}

// Record is one result row, by column name.
type Record map[string]any

// read runs work in a read transaction and returns its typed result.
func read[T any](ctx context.Context, r Runner, work func(context.Context, Tx) (T, error)) (T, error) {
	return run(ctx, r.Read, work)
}

// write runs work in a write transaction and returns its typed result.
func write[T any](ctx context.Context, r Runner, work func(context.Context, Tx) (T, error)) (T, error) {
	return run(ctx, r.Write, work)
}

func run[T any](ctx context.Context, exec func(context.Context, Work) (any, error), work func(context.Context, Tx) (T, error)) (T, error) {
	v, err := exec(ctx, func(ctx context.Context, tx Tx) (any, error) { return work(ctx, tx) })
	if err != nil {
		var zero T
		return zero, err
	}
	return v.(T), nil
}

// single runs a statement that returns at most one record; ok is false when
// it returned none.
func single(ctx context.Context, tx Tx, cypher string, params map[string]any) (Record, bool, error) {
	recs, err := tx.Query(ctx, cypher, params)
	if err != nil || len(recs) == 0 {
		return nil, false, err
	}
	return recs[0], true, nil
}

// str reads a string column; a missing or null value is "".
func (r Record) str(key string) string {
	s, _ := r[key].(string)
	return s
}

// strs reads a list-of-strings column, skipping nulls.
func (r Record) strs(key string) []string {
	list, _ := r[key].([]any)
	out := make([]string, 0, len(list))
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// boolean reads a boolean column; a missing value is false.
func (r Record) boolean(key string) bool {
	b, _ := r[key].(bool)
	return b
}

// integer reads an integer column; a missing value is 0.
func (r Record) integer(key string) int {
	n, _ := r[key].(int64)
	return int(n)
}
