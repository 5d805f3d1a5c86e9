// Package socket is the terminal approver's control socket: a Unix
// socket per running server under $XDG_RUNTIME_DIR/toolwarden/, mode 0600,
// on which `toolwarden approvals` lists, approves and denies the calls that
// wait in the server's approvals.Hub. Only the server's own user may
// connect: the peer's uid is checked with SO_PEERCRED on every connection.
package socket

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// Dir is where the servers' sockets live: $XDG_RUNTIME_DIR/toolwarden,
// else toolwarden-UID under the temporary directory. It is created 0700
// and must belong to the current user and not be a symlink.
func Dir() (string, error) {
	base := os.Getenv("XDG_RUNTIME_DIR")
	name := "toolwarden"
	if base == "" {
		base, name = os.TempDir(), fmt.Sprintf("toolwarden-%d", os.Getuid())
	}
	dir := filepath.Join(base, name)
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return "", fmt.Errorf("control socket directory %s is not a directory", dir)
	case !ok || int(st.Uid) != os.Getuid():
		return "", fmt.Errorf("control socket directory %s belongs to another user", dir)
	case fi.Mode().Perm()&0o077 != 0:
		return "", fmt.Errorf("control socket directory %s is open to other users (mode %v); want 0700", dir, fi.Mode().Perm())
	}
	return dir, nil
}

// suffix ends every socket's name; the name before it is the server's
// process ID, which --server picks.
const suffix = ".sock"

// Sockets lists the sockets in dir, sorted.
func Sockets(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), suffix) && e.Type()&os.ModeSocket != 0 {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// ServerName is the name --server knows a socket by.
func ServerName(socket string) string {
	return strings.TrimSuffix(filepath.Base(socket), suffix)
}
