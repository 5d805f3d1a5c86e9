package mcpserver

import (
	"path/filepath"

	"github.com/toolwarden/toolwarden/configs"
)

// protectedWrites are capability denials the config cannot lift: no tool
// may write the server's own configuration (the file it read, the default
// ./toolwarden.yaml, the tools.d directories beside them) or its audit log
// (with its rotated and .torn files)
// when they lie inside the workspace. A model that could write them would
// widen its own policy at the next start, or erase its trail.
func protectedWrites(cfg configs.Config) []string {
	ws := workspaceDir(cfg.Workspace)
	files := []string{filepath.Join(ws, "toolwarden.yaml"), AuditPath(cfg)}
	dirs := []string{filepath.Join(ws, configs.ToolsDir)}
	if cfg.File != "" {
		files = append(files, cfg.File)
		if target, err := filepath.EvalSymlinks(cfg.File); err == nil {
			files = append(files, target) // what the server read, if cfg.File is a link
		}
		dirs = append(dirs, filepath.Join(filepath.Dir(cfg.File), configs.ToolsDir))
	}
	var deny []string
	for _, f := range files {
		if rel, ok := inside(ws, f); ok {
			deny = append(deny, "fs:write:"+rel)
		}
	}
	// Its rotated files (audit.jsonl.<time>) and torn lines set aside
	// (audit.jsonl.torn) are the same trail.
	if rel, ok := inside(ws, AuditPath(cfg)); ok {
		deny = append(deny, "fs:write:"+rel+".*")
	}
	for _, d := range dirs {
		if rel, ok := inside(ws, d); ok {
			deny = append(deny, "fs:write:"+rel, "fs:write:"+rel+"/**")
		}
	}
	return deny
}

// inside returns path relative to the workspace ws when it lies inside it
// (and is not ws itself), its directory's symlinks resolved like the
// workspace's, whether or not the file exists yet. The file itself is not
// resolved: a link named like the config is protected as itself.
func inside(ws, path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	if dir, err := resolveExisting(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(dir, filepath.Base(abs))
	}
	rel, ok := relInside(ws, abs)
	return rel, ok && rel != "."
}
