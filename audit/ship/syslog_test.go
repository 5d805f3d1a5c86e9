package ship

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leodido/go-syslog/v4"
	"github.com/leodido/go-syslog/v4/octetcounting"
	"github.com/leodido/go-syslog/v4/rfc5424"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// receiver is a syslog server for a test: it parses what arrives as RFC
// 5424 and keeps the messages.
type receiver struct {
	mu   sync.Mutex
	msgs []*rfc5424.SyslogMessage
	errs []error
}

func (r *receiver) add(res *syslog.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if res.Error != nil {
		r.errs = append(r.errs, res.Error)
		return
	}
	r.msgs = append(r.msgs, res.Message.(*rfc5424.SyslogMessage))
}

func (r *receiver) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, m := range r.msgs {
		out = append(out, *m.Message)
	}
	return out
}

// serveDatagrams parses one message per datagram (UDP, unix datagram).
func (r *receiver) serveDatagrams(c net.PacketConn) {
	p := rfc5424.NewParser()
	buf := make([]byte, 65536)
	for {
		n, _, err := c.ReadFrom(buf)
		if err != nil {
			return
		}
		m, err := p.Parse(append([]byte(nil), buf[:n]...))
		r.add(&syslog.Result{Message: m, Error: err})
	}
}

// serveStream parses octet-counted messages on each TCP connection.
func (r *receiver) serveStream(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go octetcounting.NewParser(syslog.WithListener(r.add)).Parse(c)
	}
}

// logWithSink appends n lines to a new log that ships to target and
// returns the local lines.
func logWithSink(t *testing.T, target string, n int) ([]string, *Syslog) {
	t.Helper()
	s, err := NewSyslog(target, 64, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := audit.OpenWith(path, audit.Options{Replica: "r1", Ship: s, Log: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	for i := range n {
		require.NoError(t, a.Append(audit.Entry{Session: "s", Tool: "read_file", ArgsSHA256: fmt.Sprint(i), Rule: "allowed", Outcome: guard.Allow}))
	}
	require.NoError(t, a.Close())
	require.NoError(t, s.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"), s
}

// TestSyslogShipsEveryLine: over UDP, TCP and a unix datagram socket, the
// server gets every line as an RFC 5424 message whose MSG is the line
// byte for byte, so the shipped copy verifies as the file does.
func TestSyslogShipsEveryLine(t *testing.T) {
	for _, network := range []string{"udp", "tcp", "unixgram"} {
		t.Run(network, func(t *testing.T) {
			r := &receiver{}
			var target string
			switch network {
			case "udp", "unixgram":
				addr := "127.0.0.1:0"
				if network == "unixgram" {
					addr = filepath.Join(t.TempDir(), "log.sock")
				}
				c, err := net.ListenPacket(network, addr)
				require.NoError(t, err)
				t.Cleanup(func() { c.Close() })
				go r.serveDatagrams(c)
				target = "udp://" + c.LocalAddr().String()
				if network == "unixgram" {
					target = "unix://" + addr
				}
			case "tcp":
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				require.NoError(t, err)
				t.Cleanup(func() { ln.Close() })
				go r.serveStream(ln)
				target = "tcp://" + ln.Addr().String()
			}
			local, s := logWithSink(t, target, 20)
			require.Eventually(t, func() bool { return len(r.lines()) == len(local) }, 10*time.Second, 10*time.Millisecond)
			require.Equal(t, local, r.lines())
			require.Empty(t, r.errs)
			require.Equal(t, uint64(len(local)), s.Sent())
			require.Zero(t, s.Dropped())
			m := r.msgs[0]
			require.Equal(t, "toolwarden", *m.Appname)
			require.Equal(t, "audit", *m.MsgID)
			require.Equal(t, uint8(13*8+6), *m.Priority)
			res, err := audit.Verify(strings.NewReader(strings.Join(r.lines(), "\n") + "\n"))
			require.NoError(t, err, "the shipped copy verifies")
			require.Equal(t, len(local), res.Lines)
		})
	}
}

// TestSyslogOutageNeverHoldsUpTheLog: with the server down, every line is
// still written locally, shipments beyond the queue are dropped and
// counted, the outage is logged, and shipping resumes when the server is
// back on its port.
func TestSyslogOutageNeverHoldsUpTheLog(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // down

	var logBuf testenv.SyncBuffer
	s, err := NewSyslog("tcp://"+addr, 4, slog.New(slog.NewTextHandler(&logBuf, nil)))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := audit.OpenWith(path, audit.Options{Ship: s, Log: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer a.Close()
	for i := range 50 {
		require.NoError(t, a.Append(audit.Entry{Session: "s", Tool: "t", ArgsSHA256: fmt.Sprint(i), Rule: "allowed", Outcome: guard.Allow}))
	}
	res, err := audit.VerifyFiles([]string{path})
	require.NoError(t, err)
	require.Equal(t, 50, res.Files[0].Lines, "every line is in the local log")
	require.GreaterOrEqual(t, s.Dropped(), uint64(50-4-1), "beyond the queue and the line in hand, shipments are dropped")
	require.Eventually(t, func() bool { return strings.Contains(logBuf.String(), "sink unreachable") }, 10*time.Second, 10*time.Millisecond)

	r := &receiver{}
	ln, err = net.Listen("tcp", addr)
	require.NoError(t, err)
	defer ln.Close()
	go r.serveStream(ln)
	require.Eventually(t, func() bool { return s.Sent() >= 4 }, 30*time.Second, 20*time.Millisecond,
		"the queued lines go out once the server is back")
	require.NoError(t, a.Append(audit.Entry{Session: "s", Tool: "t", ArgsSHA256: "after", Rule: "allowed", Outcome: guard.Allow}))
	require.Eventually(t, func() bool {
		l := r.lines()
		return len(l) > 0 && strings.Contains(l[len(l)-1], `"args_sha256":"after"`)
	}, 30*time.Second, 20*time.Millisecond, "shipping resumes when the server is back")
	require.Contains(t, logBuf.String(), "audit shipping resumed")
	require.NoError(t, s.Close())
}
