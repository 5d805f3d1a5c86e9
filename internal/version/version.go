// Package version tells which toolwarden build is running: its version,
// the commit it was built from and when. A security tool is asked "which
// build wrote this audit log / answered this client?", and "dev" does not
// answer it.
//
// A release build stamps the three values with the linker
// (goreleaser, see .goreleaser.yaml):
//
//	go build -ldflags "-X github.com/toolwarden/toolwarden/internal/version.version=0.1.0
//	  -X github.com/toolwarden/toolwarden/internal/version.commit=<sha>
//	  -X github.com/toolwarden/toolwarden/internal/version.date=<RFC 3339>"
//
// A build that was not stamped falls back to what the Go toolchain records
// in the binary: `go install ...@v0.1.0` records the module version (a
// module download has no VCS, so no commit beyond a pseudo-version's
// prefix), go build in a clone the vcs.revision and vcs.time settings and
// a pseudo-version.
package version

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Set with -ldflags -X; empty when the build was not stamped.
var (
	version string
	commit  string
	date    string
)

// Dev is the version of a build that neither the linker nor the Go
// toolchain gave one (go build in a checkout without VCS stamping).
const Dev = "dev"

// Info describes one build.
type Info struct {
	// Version is a semantic version without the leading "v" ("0.1.0"),
	// a Go pseudo-version for an untagged commit, or Dev.
	Version string `json:"version"`
	// Commit is the full commit hash, empty when unknown.
	Commit string `json:"commit,omitempty"`
	// Date is, for a stamped build, when it was built; otherwise when its
	// commit was made (vcs.time). RFC 3339, empty when unknown.
	Date string `json:"date,omitempty"`
	// Modified is true when the build had uncommitted changes.
	Modified bool `json:"modified,omitempty"`
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string `json:"go_version,omitempty"`
}

// Get returns this binary's build information.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return resolve(version, commit, date, bi)
}

// resolve prefers the linker-stamped values and fills what is missing
// from the Go toolchain's build information (bi may be nil).
func resolve(ver, rev, when string, bi *debug.BuildInfo) Info {
	info := Info{Version: ver, Commit: rev, Date: when}
	if bi != nil {
		info.GoVersion = bi.GoVersion
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		fromSettings(&info, bi.Settings)
	}
	// go install reports "v0.1.0", goreleaser "0.1.0": print one form.
	info.Version = strings.TrimPrefix(info.Version, "v")
	if strings.HasSuffix(info.Version, "+dirty") {
		info.Version = strings.TrimSuffix(info.Version, "+dirty")
		info.Modified = true
	}
	if info.Version == "" {
		info.Version = Dev
	}
	return info
}

// fromSettings fills the commit and date from the vcs.* build settings
// when the linker did not stamp them.
func fromSettings(info *Info, settings []debug.BuildSetting) {
	stamped := info.Commit != ""
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			if !stamped {
				info.Commit = s.Value
			}
		case "vcs.time":
			if info.Date == "" {
				info.Date = s.Value
			}
		case "vcs.modified":
			if !stamped && s.Value == "true" {
				info.Modified = true
			}
		}
	}
}

// String is the one-line form `toolwarden --version` prints:
// "0.1.0 (commit 3f2a…, date 2026-11-24T19:00:00Z, go1.26.8)".
func (i Info) String() string {
	var parts []string
	if i.Commit != "" {
		c := i.Commit
		if i.Modified {
			c += ", modified"
		}
		parts = append(parts, "commit "+c)
	} else if i.Modified {
		parts = append(parts, "modified")
	}
	if i.Date != "" {
		parts = append(parts, "date "+i.Date)
	}
	if i.GoVersion != "" {
		parts = append(parts, i.GoVersion)
	}
	if len(parts) == 0 {
		return i.Version
	}
	return fmt.Sprintf("%s (%s)", i.Version, strings.Join(parts, ", "))
}
