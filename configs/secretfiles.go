package configs

import (
	"fmt"
	"slices"

	"github.com/bmatcuk/doublestar/v4"
)

// Secret files: the built-in grants cover the whole workspace, so files
// that commonly hold credentials (.env, private keys, .git/config, cloud
// and package-registry credentials, password databases) would be readable
// and writable by default, with only the output filter between them and
// the model. capabilities.secret_files lists them as workspace path globs;
// no tool reads or writes a path one of them matches (the guard denies the
// call naming the glob, grep_files skips such files). An operator lifts
// the denial with capabilities.allow_secret_files: true, or by setting a
// shorter list; either is logged as a widening.

// SecretGlobs returns the secret-file globs in force: none when
// allow_secret_files lifts them.
func (c Capabilities) SecretGlobs() []string {
	if c.AllowSecretFiles {
		return nil
	}
	return c.SecretFiles
}

func (c Capabilities) validateSecretFiles(add func(string, string, ...any)) {
	for _, g := range c.SecretFiles {
		if g == "" || !doublestar.ValidatePattern(g) {
			add("capabilities.secret_files", "%q is not a valid path glob", g)
		}
	}
}

// secretWidenings says how the secret-file denial is narrower than the
// built-in one: lifted altogether, or with globs left out.
func secretWidenings(l *Loaded, def Capabilities) []string {
	c := l.Config.Capabilities
	if c.AllowSecretFiles {
		return []string{fmt.Sprintf("capabilities.allow_secret_files lifts the denial of secret files (%d globs such as .env and *.pem) (from %s)",
			len(c.SecretFiles), l.Origin("capabilities.allow_secret_files"))}
	}
	var out []string
	for _, g := range def.SecretFiles {
		if !slices.Contains(c.SecretFiles, g) {
			out = append(out, fmt.Sprintf("capabilities.secret_files no longer denies %q (from %s)", g, l.Origin("capabilities.secret_files")))
		}
	}
	return out
}
