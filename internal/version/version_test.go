package version

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func settings(kv ...string) []debug.BuildSetting {
	var s []debug.BuildSetting
	for i := 0; i < len(kv); i += 2 {
		s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
	}
	return s
}

func TestResolve(t *testing.T) {
	const rev = "3f2a9c0d3f2a9c0d3f2a9c0d3f2a9c0d3f2a9c0d"
	// go install module@version: the module version, no VCS settings.
	goInstall := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.1.0"},
		Settings: settings("-trimpath", "true", "GOOS", "linux")}
	cases := []struct {
		name           string
		ver, rev, when string
		bi             *debug.BuildInfo
		want           Info
	}{
		{"no information at all", "", "", "", nil, Info{Version: Dev}},
		{"go build in a checkout without vcs stamping", "", "", "",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			Info{Version: Dev, GoVersion: "go1.26.8"}},
		{"go install module@v0.1.0", "", "", "", goInstall,
			Info{Version: "0.1.0", GoVersion: "go1.26.8"}},
		{"go build in a clone", "", "", "",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261124190000-3f2a9c0d3f2a"},
				Settings: settings("vcs.revision", rev, "vcs.time", "2026-11-24T19:00:00Z", "vcs.modified", "false")},
			Info{Version: "0.0.0-20261124190000-3f2a9c0d3f2a", Commit: rev, Date: "2026-11-24T19:00:00Z", GoVersion: "go1.26.8"}},
		{"go build of a modified checkout", "", "", "",
			&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261124190000-3f2a9c0d3f2a+dirty"},
				Settings: settings("vcs.revision", rev, "vcs.modified", "true")},
			Info{Version: "0.0.0-20261124190000-3f2a9c0d3f2a", Commit: rev, Modified: true}},
		{"the linker's values win over the toolchain's", "1.2.3", "abc", "2026-01-02T03:04:05Z",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.1.0"}, Settings: settings("vcs.revision", rev, "vcs.time", "2026-11-24T19:00:00Z")},
			Info{Version: "1.2.3", Commit: "abc", Date: "2026-01-02T03:04:05Z", GoVersion: "go1.26.8"}},
		{"a stamped commit is not marked modified by the toolchain", "1.2.3", "abc", "",
			&debug.BuildInfo{Settings: settings("vcs.modified", "true", "vcs.time", "2026-11-24T19:00:00Z")},
			Info{Version: "1.2.3", Commit: "abc", Date: "2026-11-24T19:00:00Z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, resolve(c.ver, c.rev, c.when, c.bi))
		})
	}
}

func TestString(t *testing.T) {
	require.Equal(t, "dev", Info{Version: Dev}.String())
	require.Equal(t, "0.1.0 (commit abc, modified, date 2026-11-24T19:00:00Z, go1.26.8)",
		Info{Version: "0.1.0", Commit: "abc", Modified: true, Date: "2026-11-24T19:00:00Z", GoVersion: "go1.26.8"}.String())
	require.Equal(t, "dev (modified)", Info{Version: Dev, Modified: true}.String())
}

// TestGetInTestBinary: a test binary is not stamped, so Get falls back to
// the toolchain and still names a version and the Go release.
func TestGetInTestBinary(t *testing.T) {
	info := Get()
	require.NotEmpty(t, info.Version)
	require.NotEmpty(t, info.GoVersion)
}
