package sandbox

import (
	_ "embed"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
)

// standbyPython is the Python stand-by (standby.py): the first program of a
// warm sandbox booted for python scripts.
//
//go:embed standby.py
var standbyPython string

// standby is a program a warm sandbox starts in place of warmInit, ahead
// of the run: it reads the same job and runs the expected program without
// starting it again when the run is one it expects, else it becomes the
// run's program as warmInit would.
type standby struct {
	// argv and env are its command line and environment.
	argv, env []string
}

// pythonFlags are the interpreter options a stand-by may start with: they
// take no argument and leave how the script runs to the command line. -I
// is required: without it python3 puts the script's directory first in
// sys.path, which a script run in place would not have.
var pythonFlags = []string{"-I", "-B", "-E", "-s", "-P", "-u"}

// standbyFor returns the stand-by for runs whose argv begins with prefix
// (an interpreter and its options; the script and its arguments follow)
// and whose environment is env; nil when there is none for it. The
// environment must set HOME: a stand-by has none of runsc's to give a run
// without one (warmInit's HOME=$HOME).
func standbyFor(prefix, env []string) *standby {
	if len(prefix) == 0 || !isPython3(prefix[0]) || !setsHome(env) {
		return nil
	}
	for _, f := range prefix[1:] {
		if !slices.Contains(pythonFlags, f) {
			return nil
		}
	}
	if !slices.Contains(prefix, "-I") {
		return nil
	}
	if _, err := os.Stat(prefix[0]); err != nil {
		return nil
	}
	// python3 <flags> -c <stand-by> <prefix...>: the stand-by reads the
	// runs it expects in its sys.argv.
	argv := append(append(slices.Clone(prefix), "-c", standbyPython), prefix...)
	return &standby{argv: argv, env: slices.Clone(env)}
}

// StartsAhead reports whether a warm sandbox booted for runs whose argv
// begins with prefix and whose environment is env starts that program
// ahead (see Warmer.Warm).
func StartsAhead(prefix, env []string) bool { return standbyFor(prefix, env) != nil }

// isPython3 reports whether p is an absolute path to python3 or
// python3.N.
func isPython3(p string) bool {
	b := path.Base(p)
	minor, dotted := strings.CutPrefix(b, "python3.")
	return strings.HasPrefix(p, "/") && (b == "python3" || dotted && minor != "" && strings.Trim(minor, "0123456789") == "")
}

// job is warmJob's job as the stand-by reads it: after its length.
func (s *standby) job(job []byte) []byte {
	return append([]byte(strconv.Itoa(len(job))+"\n"), job...)
}

// serves reports whether a run with env may take a sandbox waiting in s:
// one without HOME may not (see standbyFor).
func (s *standby) serves(env []string) bool {
	return s == nil || setsHome(env)
}

func setsHome(env []string) bool {
	return slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, "HOME=") })
}
