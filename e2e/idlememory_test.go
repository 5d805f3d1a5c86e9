package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// idleFileBudget is the most of its files (the executable, libc) an idle
// default serve may keep mapped: start-up touches ~28 MB of the binary,
// the idle release unmaps them and an idle server maps 3-6 MB back
// (libc, its ticker, collections).
const idleFileBudget = 10 << 20

// TestIdleServeUnmapsStartupPages: once a default serve has gone quiet,
// its idle release has dropped the pages of the binary that start-up
// touched, and the server still answers a call. Memory, not time: the
// wait is polled with a generous bound.
func TestIdleServeUnmapsStartupPages(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	c, pid := serveWithPID(t, env, "--workspace", ws)
	readHello(t, c)
	start, err := rssFile(pid)
	require.NoError(t, err)
	require.Greater(t, start, int64(idleFileBudget), "start-up maps less of the binary than the budget: nothing to see")

	var last int64
	require.Eventually(t, func() bool { // on its own goroutine: no t.Fatal here
		last, err = rssFile(pid)
		return err == nil && last <= idleFileBudget
	}, 2*time.Minute, time.Second, "file-backed RSS after start-up %d KB, still %d KB (%v)", start>>10, last>>10, err)
	t.Logf("file-backed RSS: %d KB after the first call, %d KB at idle", start>>10, last>>10)
	readHello(t, c) // the code it needs is mapped back
}

// rssFile is the RssFile of process pid, in bytes: its resident pages of
// files (the binary, libc), whole, as other processes mapping the same
// binary (the parallel tests) do not divide them.
func rssFile(pid int) (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no RssFile in the status of %d (exited?)", pid)
}
