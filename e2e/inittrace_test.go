package e2e

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// initLine is one package's line of GODEBUG=inittrace=1: its name, then
// the bytes and allocations its init made.
var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

// ownInitBudget is the most one of toolwarden's packages may allocate
// before main: tables and flags, not compiled regexps or schemas, which
// are built at first use (internal/lazyregexp), so that a one-shot
// command (version, config check) and an idle serve do not pay for them.
const ownInitBudget = 64 << 10

// ownInitExceptions are packages above the budget, with their ceiling.
var ownInitExceptions = map[string]int{
	// The output filter compiles its injection phrases at init (~400 KB).
	"guard/outfilter": 512 << 10,
}

// initBudget bounds the whole binary's allocations before main, the
// dependencies' included: jsonschema/v6 alone compiles its meta-schemas
// (~1.7 MB) at init. A new dependency with a heavy init fails here.
const initBudget = 9 << 19 // 4.5 MiB

// TestInitAllocations: no toolwarden package does heavy work in its init,
// and the binary's start-up allocations stay bounded. Bytes, not time:
// a count the runtime makes, stable on a loaded machine.
func TestInitAllocations(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary, "version")
	cmd.Env = append(cleanEnv(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))

	total, own := 0, 0
	for _, line := range strings.Split(string(out), "\n") {
		m := initLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		bytes, err := strconv.Atoi(m[2])
		require.NoError(t, err)
		total += bytes
		pkg, ok := strings.CutPrefix(m[1], "github.com/toolwarden/toolwarden/")
		if !ok {
			continue
		}
		own++
		budget := ownInitBudget
		if b, ok := ownInitExceptions[pkg]; ok {
			budget = b
		}
		if bytes > budget {
			t.Errorf("package %s allocates %d bytes in its init, over its budget of %d: build it at first use (sync.OnceValue, internal/lazyregexp)", pkg, bytes, budget)
		}
	}
	require.Greater(t, own, 10, "inittrace named too few toolwarden packages:\n%s", out)
	require.LessOrEqual(t, total, initBudget, "the binary allocates %d bytes before main", total)
}
