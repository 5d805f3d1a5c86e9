package git

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// A hazard is something the repository asks git to run or consult that
// go-git does not: a hook, a filter driver, an fsmonitor, an included
// config file. Writes are refused on any (their result would not be what
// git makes); reads go on, and git_status and git_diff report the ones
// that change what they show.
type hazard struct {
	Rule string
	What string
}

func (h hazard) String() string { return h.Rule + ": " + h.What }

// hazards lists the repository's hazards, config first.
func (r *repo) hazards() ([]hazard, error) {
	cfg, err := r.Config()
	if err != nil {
		return nil, toolerr.Wrap(err, toolerr.InvalidArgument, repoHint,
			"the repository's config does not parse: %v", err).WithRule("git.repository")
	}
	var out []hazard
	add := func(rule, format string, args ...any) {
		out = append(out, hazard{Rule: rule, What: fmt.Sprintf(format, args...)})
	}
	raw := cfg.Raw
	if v := raw.Section("core").Option("hooksPath"); v != "" {
		add("git.hooks", "core.hooksPath is set (%s): git would run the hooks there", toolerr.Quote(v))
	}
	if v := raw.Section("core").Option("fsmonitor"); v != "" && !strings.EqualFold(v, "false") {
		add("git.fsmonitor", "core.fsmonitor is set (%s): git would run it", toolerr.Quote(v))
	}
	for _, sub := range raw.Section("filter").Subsections {
		for _, key := range []string{"clean", "smudge", "process"} {
			if sub.HasOption(key) {
				add("git.filters", "filter.%s.%s is set: git would run it on file contents", sub.Name, key)
			}
		}
	}
	if v := raw.Section("core").Option("worktree"); v != "" {
		add("git.worktree", "core.worktree is set (%s): git would use another work tree", toolerr.Quote(v))
	}
	if raw.HasSection("include") || raw.HasSection("includeIf") {
		add("git.include", "the config includes other config files, which toolwarden does not read")
	}
	hooks, err := activeHooks(filepath.Join(r.gitDir, "hooks"))
	if err != nil {
		return nil, err
	}
	for _, h := range hooks {
		add("git.hooks", "hook %s is installed: git would run it", h)
	}
	attrs, err := filterAttributes(r.dir, r.gitDir)
	if err != nil {
		return nil, err
	}
	for _, a := range attrs {
		add("git.filters", "%s sets a filter attribute: git would run a filter driver on those files", a)
	}
	return out, nil
}

// activeHooks names the hooks git would run: executable files in the
// hooks directory other than the samples git init writes.
func activeHooks(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sample") || e.IsDir() {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Mode()&0o111 != 0 {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// filterAttr matches a gitattributes filter=NAME attribute.
var filterAttr = regexp.MustCompile(`(^|\s)filter=\S`)

// filterAttributes names the attributes files that set a filter: every
// .gitattributes in the work tree and the repository's info/attributes.
func filterAttributes(dir, gitDir string) ([]string, error) {
	var out []string
	check := func(p, name string) {
		if b, err := os.ReadFile(p); err == nil && hasFilter(b) {
			out = append(out, name)
		}
	}
	check(filepath.Join(gitDir, "info", "attributes"), ".git/info/attributes")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil // unreadable: git would not read it either
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case d.Type().IsRegular() && d.Name() == ".gitattributes":
			rel, _ := filepath.Rel(dir, p)
			check(p, filepath.ToSlash(rel))
		}
		return nil
	})
	return out, err
}

func hasFilter(b []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "#") && filterAttr.MatchString(line) {
			return true
		}
	}
	return false
}

// writable checks that a write may go ahead: no hazard, HEAD on a branch,
// no merge, rebase, cherry-pick or revert in progress and no conflicted
// entry in the index.
func (r *repo) writable() (head, error) {
	hz, err := r.hazards()
	if err != nil {
		return head{}, err
	}
	if len(hz) > 0 {
		return head{}, toolerr.New(toolerr.DeniedNotAllowed,
			"toolwarden's git tools never run hooks, filters or fsmonitor, so they do not write to a repository that asks for them; commit with git yourself, or remove the setting.",
			"the repository asks for what toolwarden does not run: %s", hz[0]).WithRule(hz[0].Rule)
	}
	h, err := r.head()
	if err != nil {
		return head{}, err
	}
	if h.Detached {
		return head{}, toolerr.New(toolerr.Conflict, "Check out a branch first (a human, with git).",
			"HEAD is detached: a commit would belong to no branch").WithRule("git.detached_head")
	}
	for _, f := range []string{"MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "rebase-merge", "rebase-apply", "sequencer"} {
		if _, err := os.Lstat(filepath.Join(r.gitDir, f)); err == nil {
			return head{}, toolerr.New(toolerr.Conflict, "Finish or abort the operation in progress with git first.",
				"an operation is in progress (.git/%s exists)", f).WithRule("git.in_progress")
		}
	}
	idx, err := r.Storer.Index()
	if err != nil {
		return head{}, err
	}
	for _, e := range idx.Entries {
		if e.Stage != 0 {
			return head{}, toolerr.New(toolerr.Conflict, "Resolve the conflicts with git first.",
				"the index has conflicted entries (%s)", toolerr.Quote(e.Name)).WithRule("git.conflicted")
		}
	}
	return h, nil
}
