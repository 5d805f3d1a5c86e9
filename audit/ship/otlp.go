package ship

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwarden/toolwarden/configs"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/proto"
)

// OTLP ships audit lines to an OpenTelemetry collector as OTLP log
// records over HTTP/protobuf (audit.ship.otlp), through a spool on disk:
// Ship appends the line to the spool (one write(2), as the log itself
// does); one goroutine sends what is spooled in batches and moves the
// spool's cursor on once the collector took a batch. While the collector
// is down or refuses, the lines wait on disk, up to spool_max_bytes, and
// go out when it is back, in order, also across a restart of the server:
// an outage costs no line unless the spool fills (then new lines are
// dropped and counted; the local log has them all).
type OTLP struct {
	endpoint string
	headers  http.Header
	client   *http.Client
	resource resourceInfo
	spool    *spool
	log      *slog.Logger

	wake      chan struct{}
	quit      chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	sent, dropped, rejected atomic.Uint64
	down                    bool
	spoolErr                atomic.Bool
}

// OTLPOptions configure an OTLP shipper.
type OTLPOptions struct {
	// Endpoint is audit.ship.otlp, checked by configs.OTLPEndpoint.
	Endpoint string
	// Spool is the spool's directory; SpoolMaxBytes bounds it.
	Spool         string
	SpoolMaxBytes int64
	// Replica and Version name the server in each batch's resource.
	Replica, Version string
	// Headers are sent with each request (an API key); nil reads the
	// standard OTEL_EXPORTER_OTLP_LOGS_HEADERS or OTEL_EXPORTER_OTLP_HEADERS.
	Headers http.Header
	Log     *slog.Logger
}

// Batch bounds and the sender's timing. maxBackoff and drainTimeout are
// the syslog sender's.
const (
	batchLines    = 512
	batchBytes    = 1 << 20
	exportTimeout = 10 * time.Second
)

// NewOTLP opens the spool and starts sending what it holds.
func NewOTLP(o OTLPOptions) (*OTLP, error) {
	endpoint, err := configs.OTLPEndpoint(o.Endpoint)
	if err != nil {
		return nil, err
	}
	headers := o.Headers
	if headers == nil {
		if headers, err = envHeaders(); err != nil {
			return nil, err
		}
	}
	sp, err := openSpool(o.Spool, o.SpoolMaxBytes)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	// A redirect is not followed: the lines go to the configured
	// collector or wait, never to wherever an answer points.
	client := &http.Client{Timeout: exportTimeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	s := &OTLP{endpoint: endpoint, headers: headers, client: client,
		resource: resourceInfo{replica: o.Replica, version: o.Version, host: host},
		spool:    sp, log: o.Log, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	if n := sp.pending(); n > 0 {
		s.log.Info("audit shipping: lines spooled by an earlier run go out first", "sink", endpoint, "bytes", n)
	}
	go s.run()
	return s, nil
}

// Ship appends a copy of line to the spool (audit.Shipper) and wakes the
// sender; it never waits for the collector.
func (s *OTLP) Ship(line []byte, _ uint64, _ string) {
	ok, err := s.spool.add(line)
	switch {
	case err != nil:
		s.dropped.Add(1)
		if !s.spoolErr.Swap(true) {
			s.log.Warn("audit shipping: the spool cannot be written; lines are dropped and counted (the local log has them)", "err", err)
		}
		return
	case !ok:
		s.dropped.Add(1)
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Sent, Dropped and Rejected count the lines the collector took, those
// the spool had no room for, and those the collector refused as bad data
// (HTTP 400 or a partial success), which are not sent again.
func (s *OTLP) Sent() uint64     { return s.sent.Load() }
func (s *OTLP) Dropped() uint64  { return s.dropped.Load() }
func (s *OTLP) Rejected() uint64 { return s.rejected.Load() }

// Close sends what is spooled for at most drainTimeout and stops; what
// is left stays in the spool for the next start.
func (s *OTLP) Close() error {
	s.closeOnce.Do(func() { close(s.quit) })
	<-s.done
	if n := s.spool.pending(); n > 0 {
		s.log.Warn("audit shipping: lines left in the spool go out at the next start", "sink", s.endpoint, "bytes", n)
	}
	if n := s.dropped.Load(); n > 0 {
		s.log.Warn("audit shipping: lines dropped in all, the spool being full (the local log has them)", "sink", s.endpoint, "dropped", n)
	}
	return s.spool.close()
}

func (s *OTLP) run() {
	defer close(s.done)
	stop := s.quit
	var drainStop <-chan time.Time
	for {
		lines, next, err := s.spool.next(batchLines, batchBytes)
		if err != nil {
			s.log.Warn("audit shipping: reading the spool", "err", err)
		}
		if len(lines) == 0 {
			if stop == nil {
				return
			}
			select {
			case <-s.wake:
			case <-stop:
				stop, drainStop = nil, time.After(drainTimeout)
			}
			continue
		}
		if !s.deliver(lines, next, stop, drainStop) {
			return
		}
		select {
		case <-stop:
			stop, drainStop = nil, time.After(drainTimeout)
		case <-drainStop:
			return
		default:
		}
	}
}

// deliver exports one batch until the collector takes it, retrying with
// backoff; false when the server is stopping and drainTimeout has run
// out, or the collector is down while stopping.
func (s *OTLP) deliver(lines [][]byte, next cursor, stop <-chan struct{}, drainStop <-chan time.Time) bool {
	backoff := 100 * time.Millisecond
	for {
		err := s.export(lines)
		if err == nil || isRejected(err) {
			if err != nil {
				s.log.Warn("audit shipping: the collector refused a batch as bad data; it is not sent again (the local log has it)", "sink", s.endpoint, "lines", len(lines), "err", err)
			}
			if cerr := s.spool.commit(next); cerr != nil {
				s.log.Warn("audit shipping: moving the spool's cursor", "err", cerr)
			}
			s.resumed()
			return true
		}
		if !s.down {
			s.down = true
			s.log.Warn("audit shipping: collector unreachable; lines wait in the spool (nothing is lost unless it fills)", "sink", s.endpoint, "err", err)
		}
		select {
		case <-stop:
			return true // run notices and drains for drainTimeout
		case <-drainStop:
			return false
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

func (s *OTLP) resumed() {
	if s.down {
		s.down = false
		s.log.Info("audit shipping resumed", "sink", s.endpoint, "spooled_bytes", s.spool.pending())
	}
}

// rejected is a batch the collector refused as malformed, which sending
// again cannot fix.
type rejected struct{ msg string }

func (r rejected) Error() string { return r.msg }

func isRejected(err error) bool {
	_, ok := err.(rejected)
	return ok
}

// export sends one batch as an ExportLogsServiceRequest.
func (s *OTLP) export(lines [][]byte) error {
	body, err := proto.Marshal(s.request(lines))
	if err != nil {
		return rejected{fmt.Sprintf("encoding the batch: %v", err)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), exportTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range s.headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode == http.StatusBadRequest:
		s.rejected.Add(uint64(len(lines)))
		return rejected{fmt.Sprintf("HTTP 400: %s", bytes.TrimSpace(out))}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(out))
	}
	var r collogs.ExportLogsServiceResponse
	if proto.Unmarshal(out, &r) == nil && r.GetPartialSuccess().GetRejectedLogRecords() > 0 {
		n := r.GetPartialSuccess().GetRejectedLogRecords()
		s.rejected.Add(uint64(n))
		s.sent.Add(uint64(len(lines)) - uint64(min(n, int64(len(lines)))))
		s.log.Warn("audit shipping: the collector rejected records of a batch", "sink", s.endpoint, "rejected", n, "message", r.GetPartialSuccess().GetErrorMessage())
		return nil
	}
	s.sent.Add(uint64(len(lines)))
	return nil
}

// envHeaders reads the standard OTLP headers variable: key=value pairs,
// comma-separated, values URL-encoded.
func envHeaders() (http.Header, error) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_LOGS_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"} {
		if v := os.Getenv(k); v != "" {
			h, err := configs.OTLPHeaders(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			return h, nil
		}
	}
	return http.Header{}, nil
}

// String names the sink in logs.
func (s *OTLP) String() string { return "otlp " + s.endpoint + " (" + strconv.Quote(s.spool.dir) + ")" }
