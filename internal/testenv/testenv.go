// Package testenv lets integration tests find the real services started by
// scripts/services. A test that needs a service calls Need: without the
// service's environment the test is skipped, unless the run was started by
// scripts/test (TOOLWARDEN_TEST_REQUIRE_SERVICES=1), where a missing
// service is a failure, so a broken install step cannot hide behind skips.
package testenv

import (
	"os"
	"testing"
)

// RequireEnv is set by scripts/test.
const RequireEnv = "TOOLWARDEN_TEST_REQUIRE_SERVICES"

// Need returns the values of the environment variables names, skipping or
// failing t when one is empty.
func Need(t testing.TB, names ...string) []string {
	t.Helper()
	vals := make([]string, len(names))
	for i, n := range names {
		vals[i] = os.Getenv(n)
		if vals[i] != "" {
			continue
		}
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("%s is not set; scripts/test should have started the service (see scripts/services)", n)
		}
		t.Skipf("%s not set; run eval \"$(scripts/services env)\" or scripts/test", n)
	}
	return vals
}
