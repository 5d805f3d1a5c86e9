package clusterstate

import (
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Tasks keeps MCP tasks (their state and result, as the caller encodes
// them) where every replica sees them: a key per task that expires with
// it, and a sorted set per identity listing its tasks by creation.
type Tasks struct {
	c *Client
}

// NewTasks returns the task store over c.
func NewTasks(c *Client) *Tasks { return &Tasks{c: c} }

func (t *Tasks) key(id string) string         { return t.c.prefix + "task:" + id }
func (t *Tasks) index(identity string) string { return t.c.prefix + "tasks:" + identity }

// Create stores a new task of identity for ttl.
func (t *Tasks) Create(id, identity string, rec []byte, ttl time.Duration) error {
	ctx, cancel := op()
	defer cancel()
	now := time.Now()
	_, err := t.c.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, t.key(id), rec, ttl)
		p.ZAdd(ctx, t.index(identity), redis.Z{Score: float64(now.UnixMilli()), Member: id})
		// The index outlives its newest task; older members are
		// dropped as List finds their keys gone.
		p.Expire(ctx, t.index(identity), ttl)
		return nil
	})
	return err
}

// Update replaces a task's record, keeping its expiry; a task that
// expired meanwhile stays gone.
func (t *Tasks) Update(id string, rec []byte) error {
	ctx, cancel := op()
	defer cancel()
	err := t.c.rdb.SetArgs(ctx, t.key(id), rec, redis.SetArgs{KeepTTL: true, Mode: "XX"}).Err()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return err
}

// Get returns a task's record, nil when there is none (never was, or
// expired).
func (t *Tasks) Get(id string) ([]byte, error) {
	ctx, cancel := op()
	defer cancel()
	b, err := t.c.rdb.Get(ctx, t.key(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return b, err
}

// List returns the records of identity's tasks, oldest first.
func (t *Tasks) List(identity string) ([][]byte, error) {
	ctx, cancel := op()
	defer cancel()
	ids, err := t.c.rdb.ZRange(ctx, t.index(identity), 0, -1).Result()
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = t.key(id)
	}
	vals, err := t.c.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, err
	}
	var out [][]byte
	var gone []any
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			gone = append(gone, ids[i])
			continue
		}
		out = append(out, []byte(s))
	}
	if len(gone) > 0 {
		_ = t.c.rdb.ZRem(ctx, t.index(identity), gone...).Err()
	}
	return out, nil
}

// Count returns how many of identity's tasks are still kept.
func (t *Tasks) Count(identity string) (int, error) {
	ctx, cancel := op()
	defer cancel()
	ids, err := t.c.rdb.ZRange(ctx, t.index(identity), 0, -1).Result()
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	cmds, err := t.c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, id := range ids {
			p.Exists(ctx, t.key(id))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	n := 0
	var gone []any
	for i, c := range cmds {
		if c.(*redis.IntCmd).Val() == 1 {
			n++
		} else {
			gone = append(gone, ids[i])
		}
	}
	if len(gone) > 0 {
		_ = t.c.rdb.ZRem(ctx, t.index(identity), gone...).Err()
	}
	return n, nil
}
