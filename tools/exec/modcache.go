package exec

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// modReady marks a module cache whose preparation and verification
// finished; a directory without it is never mounted.
const modReady = "toolwarden-modcache-ready"

// ModCache prepares Go module caches for sandboxed Go runs that need
// dependencies but have no network: on the host, from a workspace's
// go.mod and go.sum only (copied into a directory of their own, so
// nothing else of the workspace is read), through the Go module proxy
// alone (no VCS, no checksum database), each downloaded module checked
// against the workspace's go.sum and the result checked again by
// `go mod verify`. One cache per go.mod and go.sum content, kept under
// root and only ever mounted read-only (sandbox.ModCacheDir).
type ModCache struct {
	root, goBin, proxy string
	mu                 sync.Mutex
}

// NewModCache returns the module caches kept under root, prepared with
// the Go at goRoot through proxy (a GOPROXY list of URLs; "direct" and
// "off" entries are dropped, so no version-control tool ever runs).
func NewModCache(root, goRoot, proxy string) *ModCache {
	var urls []string
	for _, p := range strings.FieldsFunc(proxy, func(r rune) bool { return r == ',' || r == '|' }) {
		if p != "direct" && p != "off" {
			urls = append(urls, p)
		}
	}
	return &ModCache{root: root, goBin: filepath.Join(goRoot, "bin", "go"), proxy: strings.Join(urls, ",")}
}

const modHint = "Tell the operator; the module's go.mod and go.sum must be complete, with every dependency from the Go module proxy."

// Prepare returns a verified module cache for goMod and goSum, preparing
// it on first use.
func (m *ModCache) Prepare(ctx context.Context, goMod, goSum []byte) (string, error) {
	if m == nil || m.proxy == "" {
		return "", toolerr.New(toolerr.BackendUnavailable, "Tell the operator: Go or a Go module proxy (GOPROXY) is missing on the server.",
			"no Go module proxy to prepare the module cache from").WithRule("exec.go_modules")
	}
	sum := sha256.Sum256(append(append(slices.Clone(goMod), 0), goSum...))
	dir := filepath.Join(m.root, hex.EncodeToString(sum[:16]))
	if _, err := os.Stat(filepath.Join(dir, modReady)); err == nil {
		return filepath.Join(dir, "mod"), nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := os.Stat(filepath.Join(dir, modReady)); err == nil {
		return filepath.Join(dir, "mod"), nil
	}
	if err := os.MkdirAll(m.root, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(m.root, "prepare-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := m.prepare(ctx, tmp, goMod, goSum); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, modReady), nil, 0o644); err != nil {
		return "", err
	}
	for _, d := range []string{"src", "home"} {
		if err := os.RemoveAll(filepath.Join(tmp, d)); err != nil {
			return "", err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, modReady)); statErr != nil {
			return "", err
		}
	}
	return filepath.Join(dir, "mod"), nil
}

// prepare downloads into tmp/mod and verifies.
func (m *ModCache) prepare(ctx context.Context, tmp string, goMod, goSum []byte) error {
	src := filepath.Join(tmp, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), goMod, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(src, "go.sum"), goSum, 0o644); err != nil {
		return err
	}
	if err := m.checkReplaces(ctx, tmp, src); err != nil {
		return err
	}
	out, err := m.goCmd(ctx, tmp, src, "mod", "download", "-json")
	if err != nil {
		return toolerr.New(toolerr.InvalidArgument, modHint, "go mod download failed: %s", lastLines(out, err)).WithRule("exec.go_modules.download")
	}
	if err := checkDownloads(out, goSum); err != nil {
		return err
	}
	after, err := os.ReadFile(filepath.Join(src, "go.sum"))
	if err != nil {
		return err
	}
	if missing := missingSums(goSum, after); len(missing) > 0 {
		return toolerr.New(toolerr.InvalidArgument, modHint,
			"go.sum lacks the checksums of %d module file(s) the build needs, first %s: nothing is used unverified",
			len(missing), toolerr.Quote(missing[0])).WithRule("exec.go_modules.go_sum")
	}
	if out, err := m.goCmd(ctx, tmp, src, "mod", "verify"); err != nil {
		return toolerr.New(toolerr.InvalidArgument, modHint, "go mod verify failed: %s", lastLines(out, err)).WithRule("exec.go_modules.verify")
	}
	return nil
}

// checkReplaces refuses a go.mod that replaces a module with a directory:
// the host would read it from wherever it points.
func (m *ModCache) checkReplaces(ctx context.Context, tmp, src string) error {
	out, err := m.goCmd(ctx, tmp, src, "mod", "edit", "-json")
	if err != nil {
		return toolerr.New(toolerr.InvalidArgument, modHint, "go.mod does not parse: %s", lastLines(out, err)).WithRule("exec.go_modules.go_mod")
	}
	var f struct {
		Replace []struct {
			Old, New struct{ Path, Version string }
		}
	}
	if err := json.Unmarshal(out, &f); err != nil {
		return err
	}
	for _, r := range f.Replace {
		if r.New.Version == "" {
			return toolerr.New(toolerr.InvalidArgument, "Replace modules with module versions only, or vendor the dependency.",
				"go.mod replaces %s with the directory %s; modules are prepared from the module proxy only",
				toolerr.Quote(r.Old.Path), toolerr.Quote(r.New.Path)).WithRule("exec.go_modules.replace")
		}
	}
	return nil
}

// checkDownloads reads go mod download -json's stream: every module must
// have downloaded, and its checksums (of the zip and of its go.mod) must
// be lines of the workspace's go.sum. go itself checks a download against
// a go.sum line that exists, but takes a module without one on trust.
func checkDownloads(out, goSum []byte) error {
	have := sumLines(goSum)
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var mod struct{ Path, Version, Error, Sum, GoModSum string }
		err := dec.Decode(&mod)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if mod.Error != "" {
			return toolerr.New(toolerr.InvalidArgument, modHint, "module %s@%s: %s", mod.Path, mod.Version, mod.Error).WithRule("exec.go_modules.download")
		}
		for _, l := range []string{mod.Path + " " + mod.Version + " " + mod.Sum, mod.Path + " " + mod.Version + "/go.mod " + mod.GoModSum} {
			if !have[l] {
				return toolerr.New(toolerr.InvalidArgument, modHint,
					"go.sum does not hold %s: nothing is used unverified", toolerr.Quote(l)).WithRule("exec.go_modules.go_sum")
			}
		}
	}
}

func sumLines(goSum []byte) map[string]bool {
	have := map[string]bool{}
	for _, l := range strings.Split(string(goSum), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	return have
}

// missingSums are the lines of after, the go.sum go left, that the
// workspace's go.sum (before) does not hold.
func missingSums(before, after []byte) []string {
	have := sumLines(before)
	var out []string
	for _, l := range strings.Split(string(after), "\n") {
		if l = strings.TrimSpace(l); l != "" && !have[l] {
			out = append(out, l)
		}
	}
	return out
}

// goCmd runs the host's go in src with an environment of its own: the
// module cache under tmp, the proxy only, no checksum database (go.sum
// is the authority), no VCS, no toolchain switch, no user config.
func (m *ModCache) goCmd(ctx context.Context, tmp, src string, args ...string) ([]byte, error) {
	cmd := osexec.CommandContext(ctx, m.goBin, args...)
	cmd.Dir = src
	home := filepath.Join(tmp, "home")
	cmd.Env = []string{
		"PATH=/usr/bin:/bin", "HOME=" + home, "GOENV=off", "GOPATH=" + filepath.Join(home, "go"),
		"GOCACHE=" + filepath.Join(home, "cache"), "GOMODCACHE=" + filepath.Join(tmp, "mod"),
		"GOPROXY=" + m.proxy, "GOSUMDB=off", "GONOSUMDB=", "GONOPROXY=", "GOPRIVATE=", "GOINSECURE=",
		"GOVCS=*:off", "GOTOOLCHAIN=local", "GOWORK=off", "GO111MODULE=on", "GOFLAGS=-mod=mod -modcacherw",
		"CGO_ENABLED=0", "GOTELEMETRY=off",
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.Bytes(), err
}

// lastLines is the end of a failed command's output, for an error.
func lastLines(out []byte, err error) string {
	s := strings.TrimSpace(string(out))
	if s == "" {
		return err.Error()
	}
	if len(s) > 400 {
		s = "…" + s[len(s)-400:]
	}
	return fmt.Sprintf("%s (%v)", s, err)
}

// ModEnv is the Go environment of a sandboxed run with a module cache
// mounted at dir: modules from it only, never the network, go.mod and
// go.sum never rewritten, every module checked against go.sum.
func ModEnv(dir string) []string {
	return []string{"GOMODCACHE=" + dir, "GOFLAGS=-mod=readonly", "GOPROXY=off", "GOSUMDB=off",
		"GONOSUMDB=", "GOWORK=off", "GOVCS=*:off"}
}
