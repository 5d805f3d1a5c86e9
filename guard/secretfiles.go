package guard

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/toolwarden/toolwarden/internal/capability"
)

// WithSecretFiles returns p denying every fs need on a path that one of
// globs (capabilities.secret_files: .env, *.pem, ...) matches, whatever
// is granted. Unlike a capabilities.deny entry, a secret-file glob does
// not deny a walk over a tree that might hold such a file (every walk
// would be denied, as "**/.env" may match anywhere): the walks that read
// contents (grep_files) skip those files instead, and listings show their
// names. A walk rooted at a secret path ("dir/**" with dir matched) is
// denied, so it cannot be moved, deleted or searched as a whole.
func (p Policy) WithSecretFiles(globs []string) (Policy, error) {
	for _, g := range globs {
		if !doublestar.ValidatePattern(g) {
			return Policy{}, fmt.Errorf("invalid secret-file glob %q", g)
		}
	}
	p.secrets = make([]fileGlob, len(globs))
	for i, g := range globs {
		p.secrets[i] = fileGlob{glob: g, literal: literalOf(g)}
	}
	return p, nil
}

// fileGlob is a path glob with a literal that every path it matches
// holds, so that most paths skip the glob matcher: a secret-file check
// runs every glob of the list on every fs call.
type fileGlob struct{ glob, literal string }

// literalOf returns the longest run of literal characters (no "/", none
// inside braces) of glob: every path the glob matches contains it. It is
// "" (every path goes to the matcher) for a glob with a character class
// or an escape, or whose braces it cannot follow.
func literalOf(glob string) string {
	if strings.ContainsAny(glob, `[]\`) {
		return ""
	}
	longest, start, depth := "", 0, 0
	for i := 0; i <= len(glob); i++ {
		c := byte('/')
		if i < len(glob) {
			c = glob[i]
		}
		if depth == 0 && !strings.ContainsRune("/*?{}", rune(c)) {
			continue
		}
		if depth == 0 && i-start > len(longest) {
			longest = glob[start:i]
		}
		switch c {
		case '{':
			depth++
		case '}':
			if depth--; depth < 0 {
				return ""
			}
		}
		start = i + 1
	}
	if depth != 0 {
		return ""
	}
	return longest
}

// secretGlob returns the secret-file glob that matches need's path.
func (p Policy) secretGlob(need capability.Capability) (string, bool) {
	if need.Resource != "fs" || len(p.secrets) == 0 {
		return "", false
	}
	path := need.Scope
	if r, ok := strings.CutSuffix(path, "/**"); ok {
		path = r
	}
	if capability.HasGlob(path) {
		return "", false
	}
	return secretFileGlob(p.secrets, path)
}

// secretFileGlob returns the first of globs that matches the workspace
// path p.
func secretFileGlob(globs []fileGlob, p string) (string, bool) {
	for _, g := range globs {
		if strings.Contains(p, g.literal) && doublestar.MatchUnvalidated(g.glob, p) {
			return g.glob, true
		}
	}
	return "", false
}

// secretHint is the hint of a secret-file denial.
const secretHint = "This file is denied as likely to hold credentials (capabilities.secret_files); do not retry or work around it. " +
	"If the task truly needs it, ask the operator, who can lift the denial (capabilities.allow_secret_files, logged as a widening)."
