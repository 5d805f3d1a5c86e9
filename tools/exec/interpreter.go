package exec

import (
	"os"
	"path"
	"strings"

	"github.com/toolwarden/toolwarden/sandbox"
)

// Toolchain is where go scripts find Go: GOROOT must be under /usr to be
// visible in the sandbox; Cache is the prepared, read-only GOCACHE.
type Toolchain struct {
	GoRoot string
	Cache  *GoCache
	// Mods prepares verified module caches (declared go_modules tools).
	Mods *ModCache
}

// interpreter says how one run_script interpreter runs a script: the
// script is a read-only file under sandbox.FilesDir, never a command-line
// argument, and args follow it as separate argv elements.
type interpreter struct {
	file   string
	argv   []string
	env    []string
	goRoot string
	cache  *GoCache
}

// baseEnv is the environment of every sandboxed program; nothing of the
// server's own environment is passed on.
var baseEnv = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8"}

// goBuildAndRun builds the script and runs it with the model's args as
// "$@": `go run` would take an argument ending in .go for a source file.
// The arguments are data to this fixed script, never shell code.
const goBuildAndRun = `"$GO" build -o /tmp/.toolwarden-prog "$SCRIPT" && exec /tmp/.toolwarden-prog "$@"`

// interpreters returns the enabled interpreters that this machine can run.
func interpreters(enabled []string, tc Toolchain) map[string]interpreter {
	all := map[string]interpreter{}
	if exists("/usr/bin/python3") {
		all["python"] = interpreter{file: "script.py", argv: []string{"/usr/bin/python3", "-I", "-B", path.Join(sandbox.FilesDir, "script.py")}}
	}
	if exists("/usr/bin/bash") {
		all["bash"] = interpreter{file: "script.sh", argv: []string{"/usr/bin/bash", "--noprofile", "--norc", path.Join(sandbox.FilesDir, "script.sh")}}
	}
	if tc.GoRoot != "" && tc.Cache != nil && strings.HasPrefix(tc.GoRoot, "/usr/") && exists(path.Join(tc.GoRoot, "bin", "go")) {
		all["go"] = interpreter{
			file:   "main.go",
			argv:   []string{"/usr/bin/sh", "-c", goBuildAndRun, "go-script"},
			env:    []string{"GO=" + path.Join(tc.GoRoot, "bin", "go"), "SCRIPT=" + path.Join(sandbox.FilesDir, "main.go")},
			goRoot: tc.GoRoot,
			cache:  tc.Cache,
		}
	}
	out := map[string]interpreter{}
	for _, name := range enabled {
		if in, ok := all[name]; ok {
			out[name] = in
		}
	}
	return out
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
