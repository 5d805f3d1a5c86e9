package ship

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/audit/ship/otlptest"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/testenv"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	logs "go.opentelemetry.io/proto/otlp/logs/v1"
)

// newOTLP ships to url through a spool in dir.
func newOTLP(t *testing.T, url, dir string, maxBytes int64, log *slog.Logger) *OTLP {
	t.Helper()
	s, err := NewOTLP(OTLPOptions{Endpoint: url, Spool: dir, SpoolMaxBytes: maxBytes, Replica: "r1", Version: "v-test",
		Headers: http.Header{}, Log: log})
	require.NoError(t, err)
	return s
}

// openLog opens a log in a new directory that ships to s.
func openLog(t *testing.T, s audit.Shipper) (*audit.Log, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := audit.OpenWith(path, audit.Options{Replica: "r1", Ship: s, Log: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return a, path
}

func appendTagged(t *testing.T, a *audit.Log, n int, tag string) {
	t.Helper()
	for i := range n {
		require.NoError(t, a.Append(audit.Entry{Session: "s", Identity: "alice", Tool: "read_file", ArgsSHA256: fmt.Sprint(tag, i), Rule: "allowed", Outcome: guard.Allow}))
	}
}

func fileLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func attr(rec *logs.LogRecord, key string) *common.AnyValue {
	for _, kv := range rec.GetAttributes() {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

// TestOTLPShipsEveryLine: a real OTLP/HTTP receiver decoding the protobuf
// gets every line as a log record whose body is the line byte for byte
// (so the copy verifies as the file does), with the SIEM's fields as
// attributes and the server in the resource.
func TestOTLPShipsEveryLine(t *testing.T) {
	r := otlptest.Start(t)
	s := newOTLP(t, r.URL(), t.TempDir(), 1<<20, slog.New(slog.DiscardHandler))
	a, path := openLog(t, s)
	appendTagged(t, a, 30, "")
	require.NoError(t, a.Append(audit.Entry{Session: "s", Tool: "write_file", ArgsSHA256: "x", Rule: "policy.deny", Outcome: guard.Deny, Code: "denied.policy"}))
	require.NoError(t, a.Close())
	require.NoError(t, s.Close())
	local := fileLines(t, path)
	require.Equal(t, local, r.Bodies())
	require.Empty(t, r.Refused())
	require.Equal(t, uint64(len(local)), s.Sent())
	res, err := audit.Verify(strings.NewReader(strings.Join(r.Bodies(), "\n") + "\n"))
	require.NoError(t, err, "the shipped copy verifies")
	require.Equal(t, len(local), res.Lines)

	recs := r.Records()
	first, denied := recs[0], recs[len(recs)-1]
	require.Equal(t, "toolwarden.audit.allowed", first.EventName)
	require.Equal(t, logs.SeverityNumber_SEVERITY_NUMBER_INFO, first.SeverityNumber)
	require.NotZero(t, first.TimeUnixNano)
	require.Equal(t, "tools/call", attr(first, "mcp.method.name").GetStringValue())
	require.Equal(t, "read_file", attr(first, "gen_ai.tool.name").GetStringValue())
	require.Equal(t, "alice", attr(first, "toolwarden.identity").GetStringValue())
	require.Equal(t, int64(1), attr(first, "toolwarden.audit.seq").GetIntValue())
	require.Nil(t, attr(first, "error.type"))
	require.Equal(t, logs.SeverityNumber_SEVERITY_NUMBER_WARN, denied.SeverityNumber)
	require.Equal(t, "tool_error", attr(denied, "error.type").GetStringValue())
	require.Equal(t, "denied.policy", attr(denied, "toolwarden.error.code").GetStringValue())
	res0 := map[string]string{}
	for _, kv := range r.Resources()[0].GetAttributes() {
		res0[kv.Key] = kv.Value.GetStringValue()
	}
	require.Equal(t, map[string]string{"service.name": "toolwarden", "service.version": "v-test", "service.instance.id": "r1", "host.name": res0["host.name"]}, res0)
}

// outage is how long the collector is down in TestOTLPOutageLosesNothing:
// a few seconds here; the built binary's test (e2e) takes the issue's
// 60 s. TOOLWARDEN_TEST_OTLP_OUTAGE overrides it.
func outage(t *testing.T) time.Duration {
	if v := os.Getenv("TOOLWARDEN_TEST_OTLP_OUTAGE"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err)
		return d
	}
	return 3 * time.Second
}

// TestOTLPOutageLosesNothing: writers append without pause while the
// collector is stopped, for the outage and after it; once it is back,
// every line of the local log arrives, in order, and none was dropped.
func TestOTLPOutageLosesNothing(t *testing.T) {
	r := otlptest.Start(t)
	var logBuf testenv.SyncBuffer
	s := newOTLP(t, r.URL(), t.TempDir(), 1<<30, slog.New(slog.NewTextHandler(&logBuf, nil)))
	a, path := openLog(t, s)
	appendTagged(t, a, 10, "before")
	require.Eventually(t, func() bool { return len(r.Records()) == 10 }, time.Minute, 20*time.Millisecond)

	r.Drain() // after its answers: a line recorded but unanswered is sent again (at least once)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				require.NoError(t, a.Append(audit.Entry{Session: "s", Tool: "read_file", ArgsSHA256: fmt.Sprint(w, "-", i), Rule: "allowed", Outcome: guard.Allow}))
				time.Sleep(time.Millisecond)
			}
		})
	}
	require.Eventually(t, func() bool { return strings.Contains(logBuf.String(), "collector unreachable") }, time.Minute, 20*time.Millisecond)
	time.Sleep(outage(t))
	r.Restart()
	time.Sleep(200 * time.Millisecond) // some lines after the return too
	close(stop)
	wg.Wait()
	require.NoError(t, a.Close())
	local := fileLines(t, path)
	require.Eventually(t, func() bool { return len(r.Records()) >= len(local) }, 2*time.Minute, 50*time.Millisecond,
		"every line arrives once the collector is back")
	require.NoError(t, s.Close())
	require.Equal(t, local, r.Bodies(), "every line, in order, none twice")
	require.Zero(t, s.Dropped())
	require.Contains(t, logBuf.String(), "audit shipping resumed")
	t.Logf("%d lines, %d written during the outage", len(local), len(local)-10)
}

// TestOTLPSpoolOutlivesTheServer: lines spooled while the collector was
// down when the server stopped go out at the next start, from the
// cursor on, before the new ones.
func TestOTLPSpoolOutlivesTheServer(t *testing.T) {
	r := otlptest.Start(t)
	spoolDir := t.TempDir()
	s := newOTLP(t, r.URL(), spoolDir, 1<<20, slog.New(slog.DiscardHandler))
	a, path := openLog(t, s)
	appendTagged(t, a, 5, "sent")
	require.Eventually(t, func() bool { return len(r.Records()) == 5 }, time.Minute, 20*time.Millisecond)
	r.Drain()
	appendTagged(t, a, 20, "spooled")
	require.NoError(t, a.Close())
	require.NoError(t, s.Close()) // the collector is down: they stay spooled

	r.Restart()
	s2 := newOTLP(t, r.URL(), spoolDir, 1<<20, slog.New(slog.DiscardHandler))
	a2, err := audit.OpenWith(path, audit.Options{Replica: "r1", Ship: s2, Log: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	appendTagged(t, a2, 3, "next")
	require.NoError(t, a2.Close())
	local := fileLines(t, path)
	require.Eventually(t, func() bool { return len(r.Records()) >= len(local) }, time.Minute, 20*time.Millisecond)
	require.NoError(t, s2.Close())
	require.Equal(t, local, r.Bodies())
}

// TestOTLPSpoolFull: beyond spool_max_bytes new lines are dropped and
// counted, the log keeps them, and what the spool held still arrives.
func TestOTLPSpoolFull(t *testing.T) {
	r := otlptest.Start(t)
	r.Stop()
	s := newOTLP(t, r.URL(), t.TempDir(), 4096, slog.New(slog.DiscardHandler))
	a, path := openLog(t, s)
	appendTagged(t, a, 40, "")
	require.NoError(t, a.Close())
	require.Len(t, fileLines(t, path), 40, "the log has every line")
	dropped := s.Dropped()
	require.NotZero(t, dropped)
	r.Restart()
	require.Eventually(t, func() bool { return uint64(len(r.Records()))+dropped == 40 }, time.Minute, 20*time.Millisecond)
	require.NoError(t, s.Close())
	require.Equal(t, fileLines(t, path)[:40-dropped], r.Bodies(), "the oldest lines, those spooled")
}

// TestOTLPBadRequestIsNotRetried: a batch the collector refuses as bad
// data (HTTP 400) is counted and passed over, not sent for ever.
func TestOTLPBadRequestIsNotRetried(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		calls++
		mu.Unlock()
		http.Error(w, "bad", http.StatusBadRequest)
	}))
	defer srv.Close()
	s := newOTLP(t, srv.URL, t.TempDir(), 1<<20, slog.New(slog.DiscardHandler))
	a, _ := openLog(t, s)
	appendTagged(t, a, 3, "")
	require.Eventually(t, func() bool { return s.Rejected() == 3 }, time.Minute, 20*time.Millisecond)
	require.NoError(t, a.Close())
	require.NoError(t, s.Close())
	mu.Lock()
	defer mu.Unlock()
	require.LessOrEqual(t, calls, 3, "each batch once")
	require.Zero(t, s.Sent())
}

// TestSpoolCutsATornLine: a half-written last line (a crash mid-write)
// is cut when the spool opens, and the whole lines before it are kept.
func TestSpoolCutsATornLine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	sp, err := openSpool(dir, 1<<20)
	require.NoError(t, err)
	ok, err := sp.add([]byte("{\"seq\":1}\n"))
	require.True(t, ok)
	require.NoError(t, err)
	require.NoError(t, sp.close())
	f, err := os.OpenFile(sp.segPath(1), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"seq":2,"ti`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	sp, err = openSpool(dir, 1<<20)
	require.NoError(t, err)
	defer sp.close()
	lines, _, err := sp.next(10, 1<<20)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("{\"seq\":1}\n")}, lines)
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}

// TestSpoolSegments: lines span segments; a segment wholly sent is
// removed and the cursor goes on in the next.
func TestSpoolSegments(t *testing.T) {
	dir := t.TempDir()
	sp, err := openSpool(dir, 1<<20)
	require.NoError(t, err)
	defer sp.close()
	sp.segBytes = 100
	var want []string
	for i := range 30 {
		l := fmt.Sprintf("{\"seq\":%d,\"pad\":\"%s\"}\n", i, strings.Repeat("x", 20))
		want = append(want, l)
		ok, err := sp.add([]byte(l))
		require.NoError(t, err)
		require.True(t, ok)
	}
	segs, err := sp.segments()
	require.NoError(t, err)
	require.Greater(t, len(segs), 5)
	var got []string
	for {
		lines, next, err := sp.next(4, 1<<20)
		require.NoError(t, err)
		if len(lines) == 0 {
			break
		}
		for _, l := range lines {
			got = append(got, string(l))
		}
		require.NoError(t, sp.commit(next))
	}
	require.Equal(t, want, got)
	segs, err = sp.segments()
	require.NoError(t, err)
	require.Len(t, segs, 1, "sent segments are removed")
	require.Zero(t, sp.pending())
}

// TestSpoolHasOneOwner: a second process (here a second opener) is
// refused the spool another holds, with what to do about it.
func TestSpoolHasOneOwner(t *testing.T) {
	dir := t.TempDir()
	sp, err := openSpool(dir, 1<<20)
	require.NoError(t, err)
	_, err = NewOTLP(OTLPOptions{Endpoint: "http://127.0.0.1:1", Spool: dir, SpoolMaxBytes: 1 << 20, Headers: http.Header{}, Log: slog.New(slog.DiscardHandler)})
	require.ErrorContains(t, err, "is in use by another toolwarden process: give each process that ships its own audit.ship.spool")
	require.NoError(t, sp.close())
	again, err := openSpool(dir, 1<<20)
	require.NoError(t, err, "free once closed")
	require.NoError(t, again.close())
}

// TestOTLPFollowsNoRedirect: a collector that answers with a redirect
// does not get the lines sent elsewhere; they wait in the spool.
func TestOTLPFollowsNoRedirect(t *testing.T) {
	elsewhere := otlptest.Start(t)
	var mu sync.Mutex
	tries := 0
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tries++
		mu.Unlock()
		http.Redirect(w, r, elsewhere.URL(), http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	s := newOTLP(t, redirect.URL, t.TempDir(), 1<<20, slog.New(slog.DiscardHandler))
	a, _ := openLog(t, s)
	appendTagged(t, a, 3, "")
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return tries >= 2 }, time.Minute, 20*time.Millisecond, "retried")
	require.NoError(t, a.Close())
	require.NoError(t, s.Close())
	require.Empty(t, elsewhere.Records(), "nothing went where the redirect pointed")
	require.Zero(t, s.Sent())
	require.Positive(t, s.spool.pending(), "the lines wait in the spool")
}

// TestSpoolRemovesSentSegmentsAtOpen: segments before the cursor (a crash
// between the cursor's move and their removal) are removed at open, and
// reading goes on from the cursor.
func TestSpoolRemovesSentSegmentsAtOpen(t *testing.T) {
	dir := t.TempDir()
	sp, err := openSpool(dir, 1<<20)
	require.NoError(t, err)
	sp.segBytes = 10
	for i := range 4 {
		_, err := sp.add(fmt.Appendf(nil, "{\"seq\":%d,\"x\":1}\n", i+1))
		require.NoError(t, err)
	}
	require.NoError(t, sp.close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, cursorFile), []byte("3 0\n"), 0o600))

	sp, err = openSpool(dir, 1<<20)
	require.NoError(t, err)
	defer sp.close()
	segs, err := sp.segments()
	require.NoError(t, err)
	require.Equal(t, []uint64{3, 4}, segs)
	lines, _, err := sp.next(10, 1<<20)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("{\"seq\":3,\"x\":1}\n")}, lines)
}
