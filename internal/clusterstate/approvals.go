package clusterstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/toolwarden/toolwarden/approvals"
)

// Approvals is an approvals.Fleet over Redis. A waiting request is a key
// that expires with it, listed in a sorted set; its events go out on a
// channel every replica watches; a decision is claimed once (SET NX) and
// published on the channel of the replica where the call waits, which
// settles it in its own hub.
type Approvals struct {
	c       *Client
	replica string
	hub     *approvals.Hub
	log     *slog.Logger
	sub     *redis.PubSub
}

// shared is a waiting request as Redis keeps it.
type shared struct {
	Owner   string            `json:"owner"`
	Request approvals.Request `json:"request"`
}

// message is what travels on the channels.
type message struct {
	From     string              `json:"from"`
	Event    *approvals.Event    `json:"event,omitempty"`
	Decision *approvals.Decision `json:"decision,omitempty"`
	ID       string              `json:"id,omitempty"`
	Digest   string              `json:"digest,omitempty"`
}

// ShareApprovals makes hub a member of the fleet of replicas sharing c,
// under the name replica, until the client is closed.
func ShareApprovals(c *Client, replica string, hub *approvals.Hub, log *slog.Logger) *Approvals {
	a := &Approvals{c: c, replica: replica, hub: hub, log: log}
	a.sub = c.rdb.Subscribe(context.Background(), a.events(), a.inbox(replica))
	c.onClose(a.sub.Close)
	go a.listen(a.sub.Channel())
	hub.SetFleet(a)
	return a
}

func (a *Approvals) events() string              { return a.c.prefix + "ap:events" }
func (a *Approvals) inbox(replica string) string { return a.c.prefix + "ap:inbox:" + replica }
func (a *Approvals) reqKey(id string) string     { return a.c.prefix + "ap:req:" + id }
func (a *Approvals) index() string               { return a.c.prefix + "ap:index" }

// listen passes the other replicas' events to the hub's watchers, and
// the decisions sent here to the calls that wait here. go-redis
// resubscribes by itself after Redis comes back.
func (a *Approvals) listen(ch <-chan *redis.Message) {
	for m := range ch {
		var msg message
		if json.Unmarshal([]byte(m.Payload), &msg) != nil || msg.From == a.replica {
			continue
		}
		switch {
		case msg.Event != nil:
			a.hub.Remote(*msg.Event)
		case msg.Decision != nil:
			if err := a.hub.Decide(msg.ID, msg.Digest, *msg.Decision); err != nil {
				a.log.Warn("cluster: a decision from another replica came too late", "approval", msg.ID, "err", err)
			}
		}
	}
}

// Share implements approvals.Fleet.
func (a *Approvals) Share(e approvals.Event) {
	ctx, cancel := op()
	defer cancel()
	payload, _ := json.Marshal(message{From: a.replica, Event: &e})
	_, err := a.c.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if e.Kind == "pending" {
			body, _ := json.Marshal(shared{Owner: a.replica, Request: e.Request})
			p.Set(ctx, a.reqKey(e.Request.ID), body, time.Until(e.Request.Expires)+time.Second)
			p.ZAdd(ctx, a.index(), redis.Z{Score: float64(e.Request.Created.UnixMilli()), Member: e.Request.ID})
		} else {
			p.Del(ctx, a.reqKey(e.Request.ID))
			p.ZRem(ctx, a.index(), e.Request.ID)
		}
		p.Publish(ctx, a.events(), payload)
		return nil
	})
	if err != nil {
		a.log.Warn("cluster: a waiting call could not be shared with the other replicas; only this replica's page and terminal show it",
			"approval", e.Request.ID, "err", err)
	}
}

// Waiting implements approvals.Fleet.
func (a *Approvals) Waiting() []approvals.Request {
	ctx, cancel := op()
	defer cancel()
	ids, err := a.c.rdb.ZRange(ctx, a.index(), 0, 999).Result()
	if err != nil || len(ids) == 0 {
		return nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = a.reqKey(id)
	}
	vals, err := a.c.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil
	}
	var out []approvals.Request
	for i, v := range vals {
		s, ok := v.(string)
		var sh shared
		switch {
		case !ok: // expired, or its replica died: forget it
			a.c.rdb.ZRem(ctx, a.index(), ids[i])
		case json.Unmarshal([]byte(s), &sh) == nil && sh.Owner != a.replica:
			out = append(out, sh.Request)
		}
	}
	return out
}

// Decide implements approvals.Fleet.
func (a *Approvals) Decide(id, digest string, d approvals.Decision) error {
	ctx, cancel := op()
	defer cancel()
	s, err := a.c.rdb.Get(ctx, a.reqKey(id)).Result()
	var sh shared
	switch {
	case errors.Is(err, redis.Nil):
		return approvals.ErrUnknown
	case err != nil:
		return fmt.Errorf("%w: %v", approvals.ErrFleet, err)
	case json.Unmarshal([]byte(s), &sh) != nil:
		return approvals.ErrUnknown
	case sh.Request.Digest != digest:
		return approvals.ErrDigest
	case !time.Now().Before(sh.Request.Expires):
		return approvals.ErrExpired
	}
	return a.send(ctx, sh, d)
}

// send claims the single decision of a request and sends it to its replica.
func (a *Approvals) send(ctx context.Context, sh shared, d approvals.Decision) error {
	first, err := a.c.rdb.SetNX(ctx, a.c.prefix+"ap:decided:"+sh.Request.ID, a.replica, time.Until(sh.Request.Expires)+time.Second).Result()
	switch {
	case err != nil:
		return fmt.Errorf("%w: %v", approvals.ErrFleet, err)
	case !first:
		return approvals.ErrDecided
	}
	payload, _ := json.Marshal(message{From: a.replica, Decision: &d, ID: sh.Request.ID, Digest: sh.Request.Digest})
	n, err := a.c.rdb.Publish(ctx, a.inbox(sh.Owner), payload).Result()
	switch {
	case err != nil:
		return fmt.Errorf("%w: %v", approvals.ErrFleet, err)
	case n == 0:
		return approvals.ErrUnknown // its replica is gone, and the call with it
	}
	return nil
}
