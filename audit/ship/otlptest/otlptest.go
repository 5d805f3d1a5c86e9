// Package otlptest is an OTLP/HTTP logs receiver for tests: it decodes
// each export request as the protobuf an OpenTelemetry collector takes,
// keeps the records, and can be stopped and started again on the same
// address, as a collector that goes down and comes back.
package otlptest

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	logs "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/proto"
)

// Receiver is a running (or stopped) OTLP/HTTP logs endpoint.
type Receiver struct {
	t    testing.TB
	addr string

	mu        sync.Mutex
	srv       *httptest.Server
	records   []*logs.LogRecord
	resources []*resourcepb.Resource
	bad       []string
}

// Start starts a receiver on a loopback port; it stops when the test ends.
func Start(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{t: t}
	r.listen(&net.ListenConfig{}, "127.0.0.1:0")
	t.Cleanup(r.Stop)
	return r
}

func (r *Receiver) listen(lc *net.ListenConfig, addr string) {
	ln, err := lc.Listen(r.t.Context(), "tcp", addr)
	require.NoError(r.t, err, "listening on %s", addr)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	r.mu.Lock()
	r.srv, r.addr = srv, ln.Addr().String()
	r.mu.Unlock()
}

// URL is the endpoint to export to.
func (r *Receiver) URL() string { return "http://" + r.addr + "/v1/logs" }

// Stop closes the listener and every connection: exports fail until
// Restart.
func (r *Receiver) Stop() {
	if srv := r.take(); srv != nil {
		srv.CloseClientConnections()
		srv.Close()
	}
}

// Drain stops the receiver after answering the exports it has begun to
// receive: what it recorded, its sender was told it has. Exports fail
// until Restart, as after Stop, but none is received and then lost to
// its sender (Stop cuts connections mid-answer: a sender then sends
// again what was recorded, as it must).
func (r *Receiver) Drain() {
	if srv := r.take(); srv != nil {
		srv.Close() // closes the listener and idle connections, waits for the requests under way
	}
}

// take returns the running server (nil when stopped) and forgets it.
func (r *Receiver) take() *httptest.Server {
	r.mu.Lock()
	defer r.mu.Unlock()
	srv := r.srv
	r.srv = nil
	return srv
}

// Restart listens again on the address it had.
func (r *Receiver) Restart() { r.listen(&net.ListenConfig{}, r.addr) }

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	var in collogs.ExportLogsServiceRequest
	switch {
	case req.Method != http.MethodPost || req.URL.Path != "/v1/logs":
		r.refuse(w, http.StatusNotFound, req.Method+" "+req.URL.Path)
		return
	case req.Header.Get("Content-Type") != "application/x-protobuf":
		r.refuse(w, http.StatusUnsupportedMediaType, "Content-Type "+req.Header.Get("Content-Type"))
		return
	case err != nil:
		r.refuse(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := proto.Unmarshal(body, &in); err != nil {
		r.refuse(w, http.StatusBadRequest, "not an ExportLogsServiceRequest: "+err.Error())
		return
	}
	r.mu.Lock()
	for _, rl := range in.GetResourceLogs() {
		r.resources = append(r.resources, rl.GetResource())
		for _, sl := range rl.GetScopeLogs() {
			r.records = append(r.records, sl.GetLogRecords()...)
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&collogs.ExportLogsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (r *Receiver) refuse(w http.ResponseWriter, code int, why string) {
	r.mu.Lock()
	r.bad = append(r.bad, why)
	r.mu.Unlock()
	http.Error(w, why, code)
}

// Records are the log records received so far, in order.
func (r *Receiver) Records() []*logs.LogRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*logs.LogRecord(nil), r.records...)
}

// Bodies are the records' string bodies (the audit lines), in order.
func (r *Receiver) Bodies() []string {
	var out []string
	for _, rec := range r.Records() {
		out = append(out, rec.GetBody().GetStringValue())
	}
	return out
}

// Resources are the resources of the requests received.
func (r *Receiver) Resources() []*resourcepb.Resource {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*resourcepb.Resource(nil), r.resources...)
}

// Refused lists the requests that were not OTLP logs exports.
func (r *Receiver) Refused() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bad...)
}
