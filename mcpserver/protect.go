package mcpserver

import (
	"path/filepath"
	"strings"

	"github.com/toolwarden/toolwarden/configs"
)

// protectedWrites are capability denials the config cannot lift: no tool
// may write the server's own configuration (the file it read, the default
// ./toolwarden.yaml, the tools.d directories beside them) or its audit log
// when they lie inside the workspace. A model that could write them would
// widen its own policy at the next start, or erase its trail.
func protectedWrites(cfg configs.Config) []string {
	ws := workspaceDir(cfg.Workspace)
	files := []string{filepath.Join(ws, "toolwarden.yaml"), AuditPath(cfg)}
	dirs := []string{filepath.Join(ws, "tools.d")}
	if cfg.File != "" {
		f := resolve(cfg.File)
		files = append(files, f)
		dirs = append(dirs, filepath.Join(filepath.Dir(f), "tools.d"))
	}
	var deny []string
	for _, f := range files {
		if rel, ok := within(ws, resolve(f)); ok {
			deny = append(deny, "fs:write:"+rel)
		}
	}
	for _, d := range dirs {
		if rel, ok := within(ws, resolve(d)); ok {
			deny = append(deny, "fs:write:"+rel, "fs:write:"+rel+"/**")
		}
	}
	return deny
}

// within returns path relative to dir when it lies inside it (and is not
// dir itself).
func within(dir, path string) (string, bool) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// resolve makes path absolute with its directory's symlinks resolved, like
// the workspace's, whether or not the file itself exists yet.
func resolve(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}
