package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

var helloArgs = map[string]any{"path": "hello.txt"}

// countAllowed makes n quick calls through the balancer and counts those
// that ran; every other must be refused by the rate limit.
func countAllowed(t *testing.T, f *fleet, n int) int {
	allowed := 0
	for range n {
		res, err := statelessCall(f.lb, "read_file", helloArgs, mcp.MultiRoundTripParams{})
		require.NoError(t, err)
		if !res.IsError {
			allowed++
			continue
		}
		require.Equal(t, toolerr.RateLimited, toolerr.ErrorCode(res))
	}
	return allowed
}

// TestReplicasShareRateLimit: behind a round-robin balancer, one
// identity's rate limit of 10 (burst 10) holds for the fleet when the
// replicas share Redis, and is three times as much when they do not.
func TestReplicasShareRateLimit(t *testing.T) {
	limits := []string{"TOOLWARDEN_LIMITS_RATE_PER_MINUTE=10", "TOOLWARDEN_LIMITS_BURST=10"}
	shared := startFleet(t, true, limits...)
	require.Equal(t, 10, countAllowed(t, shared, 30))
	for name, r := range shared.replicas {
		entries := replicaEntries(t, r.audit)
		require.NotEmpty(t, entries, "round robin reached replica %s", name)
	}
	alone := startFleet(t, false, limits...)
	require.Equal(t, 30, countAllowed(t, alone, 30), "each replica alone has a bucket of its own")
}

// replicaEntries are the call lines of one replica's audit file, after
// `toolwarden audit verify` checked its chain.
func replicaEntries(t *testing.T, path string) []audit.Entry {
	out, err := exec.Command(binary, "audit", "verify", path).CombinedOutput()
	require.NoError(t, err, string(out))
	return auditEntries(t, []string{"TOOLWARDEN_AUDIT_PATH=" + path})
}

// TestReplicasApprovalAcrossReplicas: a call asked for approval on
// replica a (2026-07-28, input_required) and retried with the human's
// answer on replica b runs there; the same answer replayed on c is asked
// again. Through the balancer, wherever the two requests land, it works.
func TestReplicasApprovalAcrossReplicas(t *testing.T) {
	f := startFleet(t, true)
	args := map[string]any{"path": "notes/a-to-b.md", "content": "approved on b", "create_dirs": true}
	asked, err := statelessCall(f.replicaURL("a"), "write_file", args, mcp.MultiRoundTripParams{})
	require.NoError(t, err)
	require.True(t, asked.NeedsInput(), "%v", asked.Content)
	answer := mcp.MultiRoundTripParams{RequestState: asked.RequestState, InputResponses: acceptAnswer()}
	done, err := statelessCall(f.replicaURL("b"), "write_file", args, answer)
	require.NoError(t, err)
	require.False(t, done.IsError, "%v", done.Content)
	require.False(t, done.NeedsInput())
	require.FileExists(t, filepath.Join(f.ws, "notes/a-to-b.md"))
	replayed, err := statelessCall(f.replicaURL("c"), "write_file", args, answer)
	require.NoError(t, err)
	require.True(t, replayed.NeedsInput(), "one answer runs one call, fleet-wide")

	for i := range 3 {
		args := map[string]any{"path": "notes/lb.md", "content": "through the balancer", "create_dirs": true}
		asked, err := statelessCall(f.lb, "write_file", args, mcp.MultiRoundTripParams{})
		require.NoError(t, err)
		require.True(t, asked.NeedsInput())
		done, err := statelessCall(f.lb, "write_file", args, mcp.MultiRoundTripParams{RequestState: asked.RequestState, InputResponses: acceptAnswer()})
		require.NoError(t, err)
		require.False(t, done.IsError || done.NeedsInput(), "round %d: %v", i, done.Content)
	}
}

// TestReplicasTerminalDecisionAcrossReplicas: with approval.channel
// [terminal], a call waiting on replica a is listed by `toolwarden
// approvals` on replica b's control socket and approved there.
func TestReplicasTerminalDecisionAcrossReplicas(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, "toolwarden"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "toolwarden", "config.yaml"), []byte("approval:\n  channel: [terminal]\n"), 0o644))
	f := startFleet(t, true, "XDG_CONFIG_HOME="+home)
	args := map[string]any{"path": "notes/terminal-b.md", "content": "approved on b's terminal", "create_dirs": true}
	res := make(chan *mcp.CallToolResult, 1)
	go func() {
		r, err := statelessCall(f.replicaURL("a"), "write_file", args, mcp.MultiRoundTripParams{})
		if err != nil {
			r = mcp.NewToolResultError(err.Error())
		}
		res <- r
	}()
	envB := f.cliEnv("b")
	id := waitingID(t, envB)
	out, err := approvalsCLI(t, envB, "approve", id)
	require.NoError(t, err, out)
	select {
	case r := <-res:
		require.False(t, r.IsError, "%v", r.Content)
	case <-time.After(30 * time.Second):
		t.Fatal("the call on replica a was not settled by b's decision")
	}
	require.FileExists(t, filepath.Join(f.ws, "notes/terminal-b.md"))
	out, err = approvalsCLI(t, f.cliEnv("c"), "approve", id)
	require.Error(t, err, "the call ended: %s", out)
}

func acceptAnswer() mcp.InputResponses {
	return mcp.InputResponses{"toolwarden_approval": mcp.NewElicitationInputResponse(mcp.ElicitationResult{
		ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept}})}
}

// load runs workers that call through the balancer until stop is closed,
// counting the calls that ran and those that failed (transport error,
// HTTP error or error result).
type load struct {
	ok, failed atomic.Int64
	errs       sync.Map // error text → true
	wg         sync.WaitGroup
	stop       chan struct{}

	mu       sync.Mutex
	failedAt []time.Time
}

func (l *load) fail(msg string) {
	l.failed.Add(1)
	l.errs.Store(msg, true)
	l.mu.Lock()
	l.failedAt = append(l.failedAt, time.Now())
	l.mu.Unlock()
}

func startLoad(f *fleet, workers int) *load {
	l := &load{stop: make(chan struct{})}
	for range workers {
		l.wg.Go(func() {
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				res, err := statelessCall(f.lb, "read_file", helloArgs, mcp.MultiRoundTripParams{})
				switch {
				case err != nil:
					l.fail(err.Error())
				case res.IsError:
					l.fail(string(toolerr.ErrorCode(res)))
				default:
					l.ok.Add(1)
				}
			}
		})
	}
	return l
}

func (l *load) end() { close(l.stop); l.wg.Wait() }

// TestReplicasKillOneUnderLoad: kill -9 of one replica while 16 clients
// call through the balancer fails only the calls that reached it before
// HAProxy saw it gone (those in flight, and those sent on its idle
// keep-alive connections: a POST is never retried), all within the second
// its health checks take (plus a second for a loaded machine); the others
// go on, the survivors' audit chains verify, and the replica rejoins,
// without errors, once restarted.
func TestReplicasKillOneUnderLoad(t *testing.T) {
	const workers = 16
	// HAProxy marks a replica down after two failed checks 500 ms apart;
	// on a loaded 2-core machine its timers and the clients' goroutines
	// run late by up to a second more.
	const failWindow = 3 * time.Second
	f := startFleet(t, true, "TOOLWARDEN_LIMITS_MAX_CALLS_PER_SESSION=100000000", "TOOLWARDEN_LIMITS_MAX_OUTPUT_BYTES_PER_SESSION=100000000000")
	l := startLoad(f, workers)
	time.Sleep(time.Second)
	killedAt := time.Now()
	f.kill("a")
	okAtKill := l.ok.Load()
	time.Sleep(3 * time.Second)
	require.Greater(t, l.ok.Load(), okAtKill+50, "the other replicas go on serving")
	before := len(replicaEntries(t, f.replicas["a"].audit))
	f.start("a")
	auditSize := func() int64 {
		fi, err := os.Stat(f.replicas["a"].audit)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	sizeBefore := auditSize()
	// Its audit file grows once the balancer sends it calls again.
	require.Eventually(t, func() bool { return auditSize() > sizeBefore+4096 }, 20*time.Second, 200*time.Millisecond,
		"the restarted replica takes calls again")
	l.end()
	var errs []string
	l.errs.Range(func(k, _ any) bool { errs = append(errs, k.(string)); return true })
	t.Logf("calls: %d ran, %d failed %v", l.ok.Load(), l.failed.Load(), errs)
	for _, at := range l.failedAt {
		require.WithinRange(t, at, killedAt, killedAt.Add(failWindow),
			"a call failed %s after the kill; only calls sent to the replica before the health checks saw it gone may: %v", at.Sub(killedAt), errs)
	}
	require.LessOrEqual(t, l.failed.Load(), int64(3*workers), "%v", errs)
	for _, name := range []string{"b", "c"} {
		require.NotEmpty(t, replicaEntries(t, f.replicas[name].audit), "replica %s", name)
	}
	require.Greater(t, len(replicaEntries(t, f.replicas["a"].audit)), before, "the restarted replica's calls are in its chain")
}

// TestReplicasRedisDown: with Redis stopped, calls through the balancer
// are refused with backend.unavailable (fail closed); once it is back
// they run again, with no replica restarted.
func TestReplicasRedisDown(t *testing.T) {
	f := startFleet(t, true)
	res, err := statelessCall(f.lb, "read_file", helloArgs, mcp.MultiRoundTripParams{})
	require.NoError(t, err)
	require.False(t, res.IsError)
	f.redis.Stop()
	for range 3 {
		res, err := statelessCall(f.lb, "read_file", helloArgs, mcp.MultiRoundTripParams{})
		require.NoError(t, err)
		require.True(t, res.IsError)
		require.Equal(t, toolerr.BackendUnavailable, toolerr.ErrorCode(res))
		e, ok := toolerr.FromResult(res)
		require.True(t, ok)
		require.Contains(t, e.Hint, "cluster.redis_url")
		require.Equal(t, "cluster.redis", e.Rule)
	}
	f.redis.Start(t)
	require.Eventually(t, func() bool {
		for range 3 { // one round of the balancer: every replica recovered
			res, err := statelessCall(f.lb, "read_file", helloArgs, mcp.MultiRoundTripParams{})
			if err != nil || res.IsError {
				return false
			}
		}
		return true
	}, 15*time.Second, 200*time.Millisecond)
}

// TestConfigCheckShowsCluster: `config check` says where limits and
// approvals live, and refuses a shared setup without the approval-state
// key, naming the key to set.
func TestConfigCheckShowsCluster(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	check := func(extra ...string) (string, error) {
		cmd := exec.Command(binary, "config", "check", "--workspace", ws)
		cmd.Env = append(env, extra...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := check()
	require.NoError(t, err, out)
	require.Contains(t, out, "shared_state: 'in the memory of each process (cluster.redis_url is empty)")
	shared := []string{"TOOLWARDEN_CLUSTER_REDIS_URL=redis://127.0.0.1:1/0", "TOOLWARDEN_CLUSTER_SECRET_ENV=TW_CLUSTER_SECRET",
		"TOOLWARDEN_CLUSTER_REPLICA_ID=tw-check"}
	out, err = check(shared...)
	require.Error(t, err)
	require.Contains(t, out, "cluster.secret_env: the variable TW_CLUSTER_SECRET is empty or unset")
	out, err = check(append(shared, "TW_CLUSTER_SECRET=config-check-secret-0123456789abcdef")...)
	require.NoError(t, err, out)
	require.Contains(t, out, "shared_state: shared by every replica in Redis/Valkey at redis://127.0.0.1:1/0; this replica is tw-check")
	require.Contains(t, out, "cluster:\n    redis_url: redis://127.0.0.1:1/0")
	require.NotContains(t, out, "config-check-secret", "the key is never printed")
}
