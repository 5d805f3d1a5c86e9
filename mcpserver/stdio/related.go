package stdio

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/mcpserver/internal/relay"
)

// A call's notifications (progress, log messages) must reach the client
// before the call's answer, or the client, done with the call, drops
// them. mcp-go's stdio server writes notifications from a goroutine of
// its own that reads the session's channel, and the answer is written
// here, so the last notification a handler sent just before returning
// was sometimes written after the answer (the conformance suite saw 2 of
// 3 progress notifications, TestCallNotificationsBeforeAnswer). A call's
// handler now sees the session through callSession, whose notifications
// a relay of the call's writes (started at the first one), and the answer
// is written once the relay has written all of them.

// sessionTraits is what mcp-go v1.2.1's stdio session is; callSession is
// each of these, as the session it stands for.
type sessionTraits interface {
	server.SessionWithClientInfo
	server.SessionWithProtocolVersion
	server.SessionWithLogging
	server.SessionWithSampling
	server.SessionWithElicitation
	server.SessionWithRoots
}

// callSession is the session as one call's handler sees it: the session
// itself, but for where its notifications go.
type callSession struct {
	sessionTraits
	relay *relay.Relay
}

func (s *callSession) NotificationChannel() chan<- mcp.JSONRPCNotification {
	return s.relay.Channel()
}

// relate returns ctx with the call's own session, and the function that
// returns once every notification sent so far is written. A session
// that is not what this was written for is left as it is.
func (c *toolCalls) relate(ctx context.Context) (context.Context, func()) {
	cs, ok := server.ClientSessionFromContext(ctx).(sessionTraits)
	if !ok {
		return ctx, func() {}
	}
	r := relay.New(c.writeNotification)
	return c.srv.WithContext(ctx, &callSession{sessionTraits: cs, relay: r}), r.Finish
}

// writeNotification writes n as mcp-go's stdio server would, one line.
func (c *toolCalls) writeNotification(n mcp.JSONRPCNotification) {
	b, err := json.Marshal(n)
	if err != nil {
		c.errLog.Printf("Error writing notification: %v", err)
		return
	}
	if _, err := c.out.Write(append(b, '\n')); err != nil {
		c.errLog.Printf("Error writing notification: %v", err)
	}
}
