package sandbox

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// CacheDir is where Request.Cache is mounted, read-only.
const CacheDir = "/cache"

// ModCacheDir is where Request.ModCache is mounted, read-only.
const ModCacheDir = "/gomodcache"

// rootfs is the skeleton root of every sandbox: empty mount points, a few
// files of /etc, and the host's merged-/usr symlinks. Everything a program
// can run comes from read-only binds of host directories (binds); nothing
// else of the host is visible.
type rootfs struct {
	dir   string
	binds []string
}

// skeletonDirs are the mount points every sandbox needs.
var skeletonDirs = []string{"usr", "tmp", "proc", "dev", "etc", "workspace", "run/toolwarden", "cache",
	"gomodcache", "run/toolwarden-net", "etc/ssl/certs"}

// rootDirs are host top-level directories that hold programs and libraries.
// On a merged-/usr system they are symlinks into /usr and are copied as
// such; otherwise they are bound read-only.
var rootDirs = []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"}

const etcPasswd = "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/tmp:/usr/sbin/nologin\n"
const etcGroup = "root:x:0:\nnogroup:x:65534:\n"

// prepareRootfs returns the skeleton under stateDir, building it if
// needed. Its directory is named after its content and never changed once
// built, so servers sharing stateDir can neither see half a skeleton nor
// change one under each other's running sandboxes. stateDir must not be
// reached through a symlink: the runtimes mount over the skeleton.
func prepareRootfs(stateDir string) (*rootfs, error) {
	return prepareRootfsWith(stateDir, nil)
}

// prepareRootfsWith is prepareRootfs with empty mount points for the
// absolute directories extra (and their parents) besides the skeleton's:
// a skeleton of its own, named after its content like every other.
func prepareRootfsWith(stateDir string, extra []string) (*rootfs, error) {
	plan, binds, err := rootfsPlan()
	if err != nil {
		return nil, err
	}
	for _, d := range extra {
		for rel := strings.TrimPrefix(filepath.Clean(d), "/"); rel != "." && rel != ""; rel = filepath.Dir(rel) {
			if _, ok := plan[rel]; !ok {
				plan[rel] = "dir"
			}
		}
	}
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(plan)) {
		fmt.Fprintf(h, "%s\x00%s\x00", name, plan[name])
	}
	dir := filepath.Join(stateDir, fmt.Sprintf("rootfs-%x", h.Sum(nil)[:8]))
	r := &rootfs{dir: dir, binds: binds}
	if real, err := filepath.EvalSymlinks(stateDir); err != nil || real != filepath.Clean(stateDir) {
		return nil, fmt.Errorf("sandbox state directory %s must exist and not go through a symlink (resolves to %q)", stateDir, real)
	}
	if _, err := os.Stat(dir); err == nil {
		return r, nil
	}
	tmp, err := os.MkdirTemp(stateDir, "rootfs.tmp-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := buildRootfs(tmp, plan); err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(dir); statErr != nil {
			return nil, err
		}
	}
	return r, nil
}

// rootfsPlan lists the skeleton's entries (name → "dir", "link:TARGET" or
// "file:CONTENT") and the host directories to bind read-only.
func rootfsPlan() (map[string]string, []string, error) {
	plan := map[string]string{}
	binds := []string{"/usr"}
	for _, d := range skeletonDirs {
		plan[d] = "dir"
	}
	for _, d := range rootDirs {
		host := "/" + d
		fi, err := os.Lstat(host)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(host)
			if err != nil {
				return nil, nil, err
			}
			plan[d] = "link:" + target
		case fi.IsDir():
			plan[d] = "dir"
			binds = append(binds, host)
		}
	}
	files := map[string]string{"etc/passwd": etcPasswd, "etc/group": etcGroup,
		"etc/hosts": "127.0.0.1 localhost\n", "etc/hostname": "sandbox\n"}
	// The dynamic loader finds multiarch libraries through its cache.
	if cache, err := os.ReadFile("/etc/ld.so.cache"); err == nil {
		files["etc/ld.so.cache"] = string(cache)
	}
	for name, data := range files {
		plan[name] = "file:" + data
	}
	return plan, binds, nil
}

// buildRootfs creates plan's entries under dir.
func buildRootfs(dir string, plan map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(plan)) {
		p, what := filepath.Join(dir, name), plan[name]
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		var err error
		switch {
		case what == "dir":
			err = os.MkdirAll(p, 0o755)
		case strings.HasPrefix(what, "link:"):
			err = os.Symlink(strings.TrimPrefix(what, "link:"), p)
		default:
			err = os.WriteFile(p, []byte(strings.TrimPrefix(what, "file:")), 0o644)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
