package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/audit/ship/otlptest"
)

// otlpOutage is how long the collector is down in
// TestAuditOTLPOutageFromTheBinary: the 60 s, or
// TOOLWARDEN_TEST_OTLP_OUTAGE (a Go duration) for a quicker run.
func otlpOutage(t *testing.T) time.Duration {
	if v := os.Getenv("TOOLWARDEN_TEST_OTLP_OUTAGE"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err)
		return d
	}
	return 60 * time.Second
}

// TestAuditOTLPOutageFromTheBinary drives the built binary with
// audit.ship.otlp pointing at an OTLP/HTTP receiver the test runs: calls
// go on without pause while the receiver is stopped for 60 s; once it is
// back, every line of the local log arrives as a log record, in order,
// none lost, and the shipped copy verifies as the file does.
func TestAuditOTLPOutageFromTheBinary(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	r := otlptest.Start(t)
	path := filepath.Join(filepath.Dir(ws), "otlp", "audit.jsonl")
	env = append(env, "TOOLWARDEN_AUDIT_PATH="+path, "TOOLWARDEN_AUDIT_SHIP_OTLP="+r.URL(), "TOOLWARDEN_AUDIT_REPLICA_ID=e2e-otlp",
		"TOOLWARDEN_LIMITS_MAX_CALLS_PER_SESSION=1000000") // the load outlasts the default 10000 calls an hour
	c, err := client.NewStdioMCPClient(binary, env, "serve", "--workspace", ws)
	require.NoError(t, err)
	initialize(t, c)
	require.False(t, callReadHello(t, c).IsError)
	require.Eventually(t, func() bool { return len(r.Records()) >= 3 }, time.Minute, 50*time.Millisecond,
		"the start line and the first call's lines arrive")

	// Stopped after answering what it received: a line recorded and cut
	// off from its answer is sent again, as it must be (at least once),
	// which "none twice" below would take for a fault.
	r.Drain()
	stop := make(chan struct{})
	var calls atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if res := callReadHello(t, c); res.IsError {
					t.Errorf("a call failed while the collector was down: %v", res.Content)
					return
				}
				calls.Add(1)
				time.Sleep(20 * time.Millisecond) // steady load, gentle on a shared machine
			}
		})
	}
	time.Sleep(otlpOutage(t))
	r.Restart()
	close(stop)
	wg.Wait()
	for range 3 { // and some after it is back
		require.False(t, callReadHello(t, c).IsError)
	}
	require.Eventually(t, func() bool { return len(r.Records()) >= len(audittest.Lines(t, path)) }, 3*time.Minute, 100*time.Millisecond,
		"every line spooled during the outage arrives once the collector is back")
	require.NoError(t, c.Close())
	local := audittest.Lines(t, path)
	require.Eventually(t, func() bool { return len(r.Records()) >= len(local) }, time.Minute, 50*time.Millisecond)
	require.Equal(t, local, r.Bodies(), "every line, in order, none twice")
	res, err := audit.Verify(strings.NewReader(strings.Join(r.Bodies(), "\n") + "\n"))
	require.NoError(t, err, "the shipped copy verifies")
	require.Equal(t, len(local), res.Lines)
	t.Logf("%d calls during a %s outage; %d lines shipped", calls.Load(), otlpOutage(t), len(local))

	spool, err := os.ReadDir(filepath.Join(filepath.Dir(path), ".audit.jsonl.otlp-spool"))
	require.NoError(t, err, "the spool is beside the log")
	require.NotEmpty(t, spool)
}
