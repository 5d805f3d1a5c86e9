// Package testenv decides, in one place, what a test does when something
// it needs is missing here: a service started by scripts/services, root
// (sandboxes enforce cgroup limits only as root), an ordinary account, a
// sandbox runtime, a test client. Outside scripts/test the test is
// skipped, saying what is missing; under scripts/test
// (TOOLWARDEN_TEST_REQUIRE_SERVICES=1) it fails, so that a broken install
// step or the wrong account cannot hide behind skips. Every check goes
// through Missing, so the order in which a test checks does not matter.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// RequireEnv is set to 1 by scripts/test.
const RequireEnv = "TOOLWARDEN_TEST_REQUIRE_SERVICES"

// Strict reports whether the run was started by scripts/test, where
// nothing a test needs may be missing.
func Strict() bool { return os.Getenv(RequireEnv) == "1" }

// Missing stops t because something it needs is missing: a skip, or a
// failure under scripts/test.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Strict() {
		t.Fatalf("%s (scripts/test must provide it: see scripts/sandbox-setup, scripts/services)", msg)
	}
	t.Skip(msg)
}

// Need returns the values of the environment variables names, calling
// Missing when one is empty.
func Need(t testing.TB, names ...string) []string {
	t.Helper()
	vals := make([]string, len(names))
	for i, n := range names {
		if vals[i] = os.Getenv(n); vals[i] == "" {
			Missing(t, "%s is not set; scripts/test sets it (for a service alone: eval \"$(scripts/services env)\")", n)
		}
	}
	return vals
}

// Root calls Missing unless the test runs as root: sandboxes enforce
// their cgroup limits only as root.
func Root(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		Missing(t, "needs root (cgroup limits, uid 65534 and other root-mode behaviour); run as root or under scripts/test")
	}
}

// NonRootEnv is set by scripts/test's step that runs tests as an ordinary
// account; under scripts/test, a test that needs one and runs as root is
// skipped only when that step will run it.
const NonRootEnv = "TOOLWARDEN_TEST_NONROOT_STEP"

// NonRoot stops t when it runs as root, where it cannot prove what it
// proves (root ignores file permissions). Under scripts/test, which runs
// as root, such tests run again as an ordinary account in a step of their
// own (see scripts/test); the root run skips them only when that step is
// announced.
func NonRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		if Strict() && os.Getenv(NonRootEnv) == "later" {
			t.Skip("runs as an ordinary account in scripts/test's non-root step")
		}
		Missing(t, "needs an ordinary (non-root) account")
	}
}
