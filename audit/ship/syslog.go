// Package ship sends the audit log elsewhere as it is written: every
// line to a syslog server (Syslog), and the chain head to S3 now and then
// (Anchorer), so that a log cut or rewritten on its machine is caught from
// outside it. Neither may hold up a call: the local line is written first,
// and what cannot be shipped is dropped and counted, never waited for.
package ship

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leodido/go-syslog/v4/rfc5424"
	"github.com/toolwarden/toolwarden/configs"
)

// Syslog ships audit lines to a syslog server as RFC 5424 messages: over
// UDP one per datagram (RFC 5426), over TCP with octet counting (RFC 6587),
// over a unix datagram socket one per datagram. The message is the audit
// line itself, byte for byte, so the copy at the server verifies as the
// file does (its seq, prev and hash are in it).
//
// Ship only queues (a bounded channel); one goroutine sends. While the
// server is down the sender holds the line it has and retries with
// backoff; the queue fills meanwhile, and lines beyond it are dropped and
// counted (Dropped), logged when the connection fails and when it is back.
type Syslog struct {
	network, addr string
	host, procID  string
	log           *slog.Logger
	queue         chan shipped
	quit          chan struct{}
	done          chan struct{}
	closeOnce     sync.Once

	sent, dropped atomic.Uint64

	conn      net.Conn
	down      bool
	dropsSeen uint64
}

type shipped struct {
	line []byte
	time time.Time
}

// Timing of the sender. writeTimeout bounds one write to a stuck server;
// drainTimeout bounds how long Close spends on what is still queued.
const (
	dialTimeout  = 2 * time.Second
	writeTimeout = 2 * time.Second
	maxBackoff   = 5 * time.Second
	drainTimeout = 2 * time.Second
)

// facilityPri is the PRI of every message: facility 13 (log audit),
// severity 6 (informational).
const facilityPri = 13*8 + 6

// NewSyslog starts shipping to target (audit.ship.syslog) with a queue of
// queue lines.
func NewSyslog(target string, queue int, log *slog.Logger) (*Syslog, error) {
	network, addr, err := configs.SyslogTarget(target)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	s := &Syslog{network: network, addr: addr, host: host, procID: strconv.Itoa(os.Getpid()), log: log,
		queue: make(chan shipped, max(queue, 1)), quit: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s, nil
}

// Ship queues a copy of line (audit.Shipper); it never blocks.
func (s *Syslog) Ship(line []byte, _ uint64, _ string) {
	select {
	case s.queue <- shipped{line: bytes.Clone(bytes.TrimSuffix(line, []byte("\n"))), time: time.Now()}:
	default:
		s.dropped.Add(1)
	}
}

// Sent and Dropped count the lines the server took and those given up.
func (s *Syslog) Sent() uint64    { return s.sent.Load() }
func (s *Syslog) Dropped() uint64 { return s.dropped.Load() }

// Close sends what is queued, for at most drainTimeout, and stops.
func (s *Syslog) Close() error {
	s.closeOnce.Do(func() { close(s.quit) })
	<-s.done
	if n := s.dropped.Load(); n > 0 {
		s.log.Warn("audit shipping: lines dropped in all (the local log has them)", "sink", s.network+"://"+s.addr, "dropped", n, "sent", s.sent.Load())
	}
	return nil
}

func (s *Syslog) run() {
	defer close(s.done)
	defer func() {
		if s.conn != nil {
			s.conn.Close()
		}
	}()
	for {
		select {
		case m := <-s.queue:
			s.deliver(m, s.quit)
		case <-s.quit:
			s.drain()
			return
		}
	}
}

// drain sends what is queued until drainTimeout, then drops the rest.
func (s *Syslog) drain() {
	stop := make(chan struct{})
	t := time.AfterFunc(drainTimeout, func() { close(stop) })
	defer t.Stop()
	for {
		select {
		case m := <-s.queue:
			s.deliver(m, stop)
		default:
			return
		}
	}
}

// deliver sends m, reconnecting with backoff while the server is down,
// until it is sent or stop is closed (then m is dropped).
func (s *Syslog) deliver(m shipped, stop <-chan struct{}) {
	backoff := 100 * time.Millisecond
	for {
		select {
		case <-stop:
			if s.down { // no more waiting for a server that is gone
				s.dropped.Add(1)
				return
			}
		default:
		}
		err := s.send(m)
		if err == nil {
			s.sent.Add(1)
			if s.down {
				s.down = false
				s.log.Info("audit shipping resumed", "sink", s.network+"://"+s.addr, "dropped_meanwhile", s.dropped.Load()-s.dropsSeen)
			}
			return
		}
		if !s.down {
			s.down, s.dropsSeen = true, s.dropped.Load()
			s.log.Warn("audit shipping: sink unreachable; lines queue, then are dropped and counted (the local log has them all)",
				"sink", s.network+"://"+s.addr, "err", err)
		}
		select {
		case <-stop:
			s.dropped.Add(1)
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// send writes one message, dialing first if needed; a failed connection
// is closed so that the next send dials again.
func (s *Syslog) send(m shipped) error {
	if s.conn == nil {
		c, err := net.DialTimeout(s.network, s.addr, dialTimeout)
		if err != nil {
			return err
		}
		s.conn = c
	}
	msg, err := s.format(m)
	if err != nil {
		return err
	}
	if s.network == "tcp" {
		msg = strconv.Itoa(len(msg)) + " " + msg
	}
	_ = s.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := s.conn.Write([]byte(msg)); err != nil {
		s.conn.Close()
		s.conn = nil
		return err
	}
	return nil
}

// format builds the RFC 5424 message: APP-NAME toolwarden, MSGID audit,
// the line as MSG.
func (s *Syslog) format(m shipped) (string, error) {
	msg := &rfc5424.SyslogMessage{}
	msg.SetPriority(facilityPri)
	msg.SetVersion(1)
	msg.SetTimestamp(m.time.UTC().Format("2006-01-02T15:04:05.000000Z07:00"))
	if s.host != "" {
		msg.SetHostname(s.host)
	}
	msg.SetAppname("toolwarden")
	msg.SetProcID(s.procID)
	msg.SetMsgID("audit")
	msg.SetMessage(string(m.line))
	out, err := msg.String()
	if err != nil {
		return "", fmt.Errorf("audit shipping: building the syslog message: %w", err)
	}
	return out, nil
}
