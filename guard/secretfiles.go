package guard

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/toolwarden/toolwarden/capability"
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
	p.secrets = globs
	return p, nil
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
func secretFileGlob(globs []string, p string) (string, bool) {
	for _, g := range globs {
		if doublestar.MatchUnvalidated(g, p) {
			return g, true
		}
	}
	return "", false
}

// secretHint is the hint of a secret-file denial.
const secretHint = "This file is denied as likely to hold credentials (capabilities.secret_files); do not retry or work around it. " +
	"If the task truly needs it, ask the operator, who can lift the denial (capabilities.allow_secret_files, logged as a widening)."
