package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
)

// CacheDir is where Request.Cache is mounted, read-only.
const CacheDir = "/cache"

// rootfs is the skeleton root of every sandbox: empty mount points, a few
// files of /etc, and the host's merged-/usr symlinks. Everything a program
// can run comes from read-only binds of host directories (binds); nothing
// else of the host is visible.
type rootfs struct {
	dir   string
	binds []string
}

// skeletonDirs are the mount points every sandbox needs.
var skeletonDirs = []string{"usr", "tmp", "proc", "dev", "etc", "workspace", "run/toolwarden", "cache"}

// rootDirs are host top-level directories that hold programs and libraries.
// On a merged-/usr system they are symlinks into /usr and are copied as
// such; otherwise they are bound read-only.
var rootDirs = []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"}

const etcPasswd = "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/tmp:/usr/sbin/nologin\n"
const etcGroup = "root:x:0:\nnogroup:x:65534:\n"

// prepareRootfs (re)builds the skeleton in dir. dir must not be reached
// through a symlink: the runtimes mount over it.
func prepareRootfs(dir string) (*rootfs, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	r := &rootfs{dir: dir, binds: []string{"/usr"}}
	for _, d := range skeletonDirs {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	for _, d := range rootDirs {
		host := "/" + d
		fi, err := os.Lstat(host)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(host)
			if err != nil {
				return nil, err
			}
			if err := os.Symlink(target, filepath.Join(dir, d)); err != nil {
				return nil, err
			}
		case fi.IsDir():
			if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
				return nil, err
			}
			r.binds = append(r.binds, host)
		}
	}
	files := map[string][]byte{"etc/passwd": []byte(etcPasswd), "etc/group": []byte(etcGroup),
		"etc/hosts": []byte("127.0.0.1 localhost\n"), "etc/hostname": []byte("sandbox\n")}
	// The dynamic loader finds multiarch libraries through its cache.
	if cache, err := os.ReadFile("/etc/ld.so.cache"); err == nil {
		files["etc/ld.so.cache"] = cache
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return nil, err
		}
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	if real != dir {
		return nil, fmt.Errorf("sandbox rootfs %s goes through a symlink (%s)", dir, real)
	}
	return r, nil
}
