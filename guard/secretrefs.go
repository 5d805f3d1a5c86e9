package guard

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// An upstream server's tools take paths the guard cannot resolve (they
// are on the upstream's side) and free text that may name them. A call
// that names a file the secret-file globs match ("~/.ssh/id_rsa",
// "/home/u/.env", "curl -d @~/.aws/credentials") asks the upstream to
// read or send credentials that capabilities.secret_files keeps from
// toolwarden's own tools; an upstream tool's definition that names one is
// asking the model to. SecretRefs finds such names in text.

// SecretRef is a path in a text that a secret-file glob matches.
type SecretRef struct{ Path, Glob string }

// SecretRefs finds references to secret files in text.
type SecretRefs struct{ globs []fileGlob }

// NewSecretRefs compiles globs (capabilities.secret_files; none: finds
// nothing).
func NewSecretRefs(globs []string) (*SecretRefs, error) {
	p, err := Policy{}.WithSecretFiles(globs)
	if err != nil {
		return nil, err
	}
	return &SecretRefs{globs: p.secrets}, nil
}

// refSeparators end a path in free text: white space, quotes, shell and
// markup punctuation.
const refSeparators = " \t\r\n\"'`=@$(){}[]<>;|,*"

// Find returns the secret-file references in s, each path once. It looks
// only around the globs' literals (".env", ".ssh", "id_rsa"), so text
// without them costs one substring search per glob.
func (r *SecretRefs) Find(s string) []SecretRef {
	if r == nil {
		return nil
	}
	var out []SecretRef
	seen := map[string]bool{}
	for _, g := range r.globs {
		if g.literal == "" {
			continue
		}
		for off := 0; ; {
			i := strings.Index(s[off:], g.literal)
			if i < 0 {
				break
			}
			i += off
			path, end := tokenAround(s, i, i+len(g.literal))
			off = end
			if path == "" || seen[path] {
				continue
			}
			if glob, ok := secretFileGlob(r.written(path), path); ok {
				seen[path] = true
				out = append(out, SecretRef{Path: path, Glob: glob})
			}
		}
	}
	return out
}

// written returns the globs a token is checked against: a bare name
// ("the .ssh directory") names a file, not a directory, so the globs of
// whole directories ("**/.ssh/**") need it written as a path ("~/.ssh").
func (r *SecretRefs) written(tok string) []fileGlob {
	if strings.Contains(tok, "/") {
		return r.globs
	}
	var out []fileGlob
	for _, g := range r.globs {
		if !strings.HasSuffix(g.glob, "/**") {
			out = append(out, g)
		}
	}
	return out
}

// tokenAround returns the path-like token holding s[i:j], without the
// punctuation that ends a sentence, and where it ends.
func tokenAround(s string, i, j int) (string, int) {
	for i > 0 && !strings.ContainsRune(refSeparators, rune(s[i-1])) {
		i--
	}
	for j < len(s) && !strings.ContainsRune(refSeparators, rune(s[j])) {
		j++
	}
	tok := strings.TrimRight(s[i:j], ".:!?")
	tok = strings.TrimPrefix(tok, "file://")
	if !doublestar.ValidatePathPattern(tok) {
		return "", j
	}
	return tok, j
}

// String is how a finding names the reference.
func (r SecretRef) String() string {
	return fmt.Sprintf("%s (capabilities.secret_files:%q)", r.Path, r.Glob)
}
