package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// ChromiumEnv names the browser scripts/test installs
// (scripts/approvals/setup-chromium).
const ChromiumEnv = "TOOLWARDEN_TEST_CHROMIUM"

// Chromium returns the headless browser to drive, from ChromiumEnv or
// PATH, calling Missing when there is none.
func Chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(ChromiumEnv); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	Missing(t, "no Chromium (%s unset, none on PATH); scripts/approvals/setup-chromium installs it", ChromiumEnv)
	return ""
}
