package egress_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/egress"
	"github.com/toolwarden/toolwarden/egress/egresstest"
)

func bigHandler(n int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write(bytes.Repeat([]byte("x"), n))
	}
}

func localRig(t *testing.T, h http.Handler, lim egress.Limits) (*rig, *egresstest.CA, string) {
	ca := egresstest.NewCA(t)
	port := egresstest.Port(ca.Server(t, h, "localhost"))
	r := newRig(t, rigOpts{net: allow("localhost:" + port), limits: lim,
		resolver: egresstest.Resolver{"localhost": {"127.0.0.1"}}})
	return r, ca, port
}

// TestMaxConnections: one connection more than the limit is refused 403
// naming the limit; after one ends, the next is admitted.
func TestMaxConnections(t *testing.T) {
	r, _, port := localRig(t, bigHandler(10), egress.Limits{MaxConns: 1})
	first := r.connect(t, "localhost:"+port)
	_, _, resp := r.raw(t, "CONNECT localhost:"+port+" HTTP/1.1\r\nHost: x\r\n\r\n")
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Equal(t, "toolwarden egress: more than 1 connections at once (limits.max_connections)", body(t, resp))
	first.Close()
	r.waitEvents(t, 2)
	r.connect(t, "localhost:"+port)
}

// TestMaxBytes: a download or upload past the call's budget is cut, the
// event naming the limit, and the budget spans connections.
func TestMaxBytes(t *testing.T) {
	t.Run("down", func(t *testing.T) {
		r, ca, port := localRig(t, bigHandler(1<<20), egress.Limits{MaxBytesDown: 64 << 10})
		resp, err := r.client(ca.Pool()).Get("https://localhost:" + port + "/")
		if err == nil {
			_, err = io.ReadAll(resp.Body)
		}
		require.Error(t, err)
		ev := r.waitEvents(t, 1)[0]
		require.Equal(t, egress.RuleMaxBytesDown, ev.Rule)
		require.LessOrEqual(t, ev.BytesDown, int64(64<<10))
		_, err = r.client(ca.Pool()).Get("https://localhost:" + port + "/")
		require.Error(t, err, "the budget is spent for the call")
	})
	t.Run("up", func(t *testing.T) {
		r, ca, port := localRig(t, bigHandler(10), egress.Limits{MaxBytesUp: 64 << 10})
		_, err := r.client(ca.Pool()).Post("https://localhost:"+port+"/", "text/plain", strings.NewReader(strings.Repeat("y", 1<<20)))
		require.Error(t, err)
		ev := r.waitEvents(t, 1)[0]
		require.Equal(t, egress.RuleMaxBytesUp, ev.Rule)
		require.LessOrEqual(t, ev.BytesUp, int64(64<<10))
	})
}

// TestIdleTimeout: a tunnel with no byte either way is closed.
func TestIdleTimeout(t *testing.T) {
	r, _, port := localRig(t, bigHandler(10), egress.Limits{IdleTimeout: 50 * time.Millisecond})
	conn := r.connect(t, "localhost:"+port)
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err := conn.Read(make([]byte, 1))
	require.Error(t, err)
	require.Equal(t, egress.RuleIdle, r.waitEvents(t, 1)[0].Rule)
}

// TestCloseEndsTheCall: Close cuts open tunnels and stops Serve.
func TestCloseEndsTheCall(t *testing.T) {
	r, _, port := localRig(t, bigHandler(10), egress.Limits{})
	conn := r.connect(t, "localhost:"+port)
	require.NoError(t, r.call.Close())
	_, err := conn.Read(make([]byte, 1))
	require.Error(t, err)
	r.waitEvents(t, 1)
}

// TestPlainHTTP: an absolute-URI request to an allowed host is forwarded.
func TestPlainHTTP(t *testing.T) {
	srv := http.Server{Handler: http.HandlerFunc(hello)}
	l := listenLocal(t)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	port := portOf(l.Addr().String())
	r := newRig(t, rigOpts{net: allow("localhost:" + port), resolver: egresstest.Resolver{"localhost": {"127.0.0.1"}}})
	resp, err := r.client(nil).Get("http://localhost:" + port + "/simple")
	require.NoError(t, err)
	require.Equal(t, "hello from localhost:"+port, body(t, resp))
	ev := r.waitEvents(t, 1)[0]
	require.True(t, ev.Allowed)
	require.Equal(t, "127.0.0.1", ev.Addr)
}

// TestConcurrentCalls: many clients through one call at once, under the
// race detector, each request answered and each connection one event.
func TestConcurrentCalls(t *testing.T) {
	r, ca, port := localRig(t, bigHandler(32<<10), egress.Limits{MaxConns: 64})
	c := r.client(ca.Pool())
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 20 {
		wg.Go(func() {
			for j := range 5 {
				resp, err := c.Get(fmt.Sprintf("https://localhost:%s/%d/%d", port, i, j))
				if err != nil {
					errs <- err
					continue
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || len(b) != 32<<10 {
					errs <- fmt.Errorf("read %d bytes: %v", len(b), err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	evs := r.waitEvents(t, 100)
	var down int64
	for _, e := range evs {
		require.True(t, e.Allowed)
		down += e.BytesDown
	}
	require.Greater(t, down, int64(100*32<<10))
}
