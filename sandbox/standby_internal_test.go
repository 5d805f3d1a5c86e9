package sandbox

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var pyPrefix = []string{"/usr/bin/python3", "-I", "-B"}

// pyEnv is a python run's environment (tools/exec's, HOME included).
var pyEnv = []string{"PATH=/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8"}

func hostStandby(t *testing.T) *standby {
	t.Helper()
	sb := standbyFor(pyPrefix, pyEnv)
	if sb == nil {
		t.Skip("no /usr/bin/python3")
	}
	return sb
}

// standbyCmd is the stand-by run on the host, fed job and then stdin.
func standbyCmd(sb *standby, job []byte, stdin string) *exec.Cmd {
	cmd := exec.Command(sb.argv[0], sb.argv[1:]...)
	cmd.Env = sb.env
	cmd.Stdin = bytes.NewReader(append(sb.job(job), stdin...))
	return cmd
}

// runBoth runs argv with env as Python would (cold) and through the
// stand-by, with the same stdin, and returns both outputs and statuses.
func runBoth(t *testing.T, sb *standby, argv, env []string, stdin string) (cold, warm string, coldCode, warmCode int) {
	t.Helper()
	run := func(cmd *exec.Cmd) (string, int) {
		out, err := cmd.CombinedOutput()
		if _, exited := err.(*exec.ExitError); err != nil && !exited {
			t.Fatal(err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	c := exec.Command(argv[0], argv[1:]...)
	c.Env = env
	c.Stdin = bytes.NewReader([]byte(stdin))
	cold, coldCode = run(c)
	job, ok := warmJob(Request{Argv: argv, Env: env}, 0)
	require.True(t, ok)
	warm, warmCode = run(standbyCmd(sb, job, stdin))
	return cold, warm, coldCode, warmCode
}

// A script run by the stand-by sees what it sees run by python3 itself:
// argv, environment, stdin, its namespace, tracebacks, exit status (the
// host's python3 here; the sandbox tests do the same under gVisor).
func TestStandbyRunsTheScriptAsPythonDoes(t *testing.T) {
	sb := hostStandby(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "script.py")
	require.NoError(t, os.WriteFile(script, []byte(`import sys, os, json
g = {k: (type(v).__name__ if k in ("__builtins__", "__loader__") else v) for k, v in globals().items() if k != "json"}
print(json.dumps([sys.argv, sys.orig_argv, dict(os.environ), sys.stdin.read(), sorted(sys.modules), g, sys.path], default=repr))
raise ValueError("boom")
`), 0o600))
	argv := append(append(pyPrefix[:3:3], script), "plain", "two words", "line1\nline2", "", "-e=x", "ünï ✓")
	cold, warm, coldCode, warmCode := runBoth(t, sb, argv, pyEnv, "stdin\nbytes")
	require.Equal(t, 1, coldCode, cold)
	require.Equal(t, cold, warm)
	require.Equal(t, coldCode, warmCode)
	require.Contains(t, warm, `File "`+script+`", line 4, in <module>`)
	require.NotContains(t, warm, "<string>", "the stand-by's own frames are not in the traceback")

	// What the stand-by does around the script is not thrown by the names
	// the script defines, and a failing excepthook or source that does not
	// decode is reported in python3's words.
	for name, src := range map[string]string{
		"shadowed builtins":      "type = 'csv'\nisinstance = 1\nException = BaseException = 2\nraise ValueError('x')\n",
		"its own SystemExit":     "import sys\nclass SystemExit(Exception): pass\nsys.exit(3)\n",
		"an excepthook raising":  "import sys\ndef h(*a): raise RuntimeError('hook')\nsys.excepthook = h\nraise ValueError('x')\n",
		"an excepthook of None":  "import sys\nsys.excepthook = None\nraise ValueError('x')\n",
		"no excepthook":          "import sys\ndel sys.excepthook\nraise ValueError('x')\n",
		"an excepthook exiting":  "import sys\nsys.excepthook = lambda *a: sys.exit(4)\nraise ValueError('x')\n",
		"sys.last_value":         "import atexit, sys\natexit.register(lambda: print(repr(sys.last_value), sys.last_traceback.tb_frame.f_code.co_name))\nraise ValueError('v')\n",
		"not UTF-8":              "print('\xff')\n",
		"an ASCII cookie":        "# coding: ascii\nprint('\xc3\xa9')\n",
		"an unknown encoding":    "# coding: nosuch\nprint(1)\n",
		"a warning and an error": "x = 1 is 1\n\nprint(\n",
		"the importer cache":     "import sys\nprint(list(sys.path_importer_cache)[-1:])\n",
	} {
		require.NoError(t, os.WriteFile(script, []byte(src), 0o600))
		cold, warm, coldCode, warmCode := runBoth(t, sb, append(pyPrefix[:3:3], script), pyEnv, "")
		require.Equal(t, cold, warm, name)
		require.Equal(t, coldCode, warmCode, name)
	}

	// It ran in place: the process is the stand-by's.
	require.NoError(t, os.WriteFile(script, []byte("print(open('/proc/self/cmdline', 'rb').read().split(b'\\0')[3])\n"), 0o600))
	_, warm, _, _ = runBoth(t, sb, append(pyPrefix[:3:3], script), pyEnv, "")
	require.Equal(t, "b'-c'\n", warm)
	// runsc may pass a spec's environment in another order.
	_, warm, _, _ = runBoth(t, sb, append(pyPrefix[:3:3], script), []string{pyEnv[2], pyEnv[0], pyEnv[1]}, "")
	require.Equal(t, "b'-c'\n", warm)
	// A NUL byte in the file: python3's own words.
	require.NoError(t, os.WriteFile(script, []byte("print(1)\x00\n"), 0o600))
	cold, warm, coldCode, warmCode = runBoth(t, sb, append(pyPrefix[:3:3], script), pyEnv, "")
	require.Equal(t, cold, warm)
	require.Equal(t, coldCode, warmCode)
	require.NoError(t, os.WriteFile(script, []byte("print(open('/proc/self/cmdline', 'rb').read().split(b'\\0')[3])\n"), 0o600))
	// An entry twice is not the stand-by's environment.
	_, warm, _, _ = runBoth(t, sb, append(pyPrefix[:3:3], script), append(pyEnv, pyEnv[0]), "")
	require.Equal(t, "b'"+script+"'\n", warm, "exec'd: cmdline[3] is the script")
}

// The stand-by runs in place only the runs it expects; any other becomes
// its program (execve) exactly as warmInit would start it (env -i, HOME
// first; signals as env leaves them; a file without #! run by /bin/sh; a
// missing program reported in env's words).
func TestStandbyExecsOtherRuns(t *testing.T) {
	sb := hostStandby(t)
	probe := "import os, sys, json; print(json.dumps([sys.orig_argv, dict(os.environ), sys.stdin.read(), open('/proc/self/cmdline', 'rb').read().decode()]))"
	noShebang := filepath.Join(t.TempDir(), "prog")
	require.NoError(t, os.WriteFile(noShebang, []byte("echo \"no #! $1\"\n"), 0o755))
	for name, c := range map[string]struct {
		argv, env []string
		code      int
	}{
		"another program":             {[]string{"/usr/bin/env"}, pyEnv, 0},
		"python -c":                   {append(pyPrefix[:3:3], "-c", probe, "a"), pyEnv, 0},
		"other flags":                 {[]string{"/usr/bin/python3", "-I", "-c", probe}, pyEnv, 0},
		"another environment":         {append(pyPrefix[:3:3], "-c", probe), []string{"PATH=/usr/bin", "HOME=/x", "LANG=C.UTF-8", "X=1"}, 0},
		"the same in new order":       {append(pyPrefix[:3:3], "-c", probe), []string{"HOME=/tmp", "PATH=/usr/bin:/bin", "LANG=C.UTF-8"}, 0},
		"no HOME":                     {append(pyPrefix[:3:3], "-c", probe), []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}, 0},
		"a script python cannot open": {append(pyPrefix[:3:3], "/nonexistent/script.py"), pyEnv, 2},
		"signals":                     {bashArgv("grep SigIgn /proc/self/status; yes | head -1; echo ${PIPESTATUS[@]}"), pyEnv, 0},
		"a file size over its limit":  {bashArgv("ulimit -f 1; exec head -c 5000 /dev/zero > " + filepath.Join(t.TempDir(), "f")), pyEnv, -1}, // killed by SIGXFSZ
		"a program without #!":        {[]string{noShebang, "arg"}, pyEnv, 0},
		"a missing program":           {[]string{"/nonexistent/program"}, pyEnv, 127},
	} {
		t.Run(name, func(t *testing.T) {
			job, ok := warmJob(Request{Argv: c.argv, Env: c.env}, 0)
			require.True(t, ok)
			// In the sandbox warmInit has runsc's environment: no LANG.
			init := exec.Command("/bin/sh", "-c", warmInit, "toolwarden-warm")
			init.Env = []string{"HOME=/tmp"}
			init.Stdin = bytes.NewReader(append(job, "in"...))
			want, _ := init.CombinedOutput()
			cmd := standbyCmd(sb, job, "in")
			got, _ := cmd.CombinedOutput()
			require.Equal(t, string(want), string(got))
			require.Equal(t, c.code, init.ProcessState.ExitCode(), string(want))
			require.Equal(t, c.code, cmd.ProcessState.ExitCode())
		})
	}
}

func bashArgv(script string) []string { return []string{"/usr/bin/bash", "-c", script} }

// As warmInit: an empty or cut job ends the stand-by with status 125, and a
// run's CPU limit is set soft and hard.
func TestStandbyReadsTheJobAsWarmInit(t *testing.T) {
	sb := hostStandby(t)
	job, ok := warmJob(Request{Argv: []string{"/bin/true"}, Env: pyEnv}, 0)
	require.True(t, ok)
	full := sb.job(job)
	for _, in := range [][]byte{nil, full[:len(full)-3], []byte("x\n"), []byte("1234567890123456789\n"), sb.job([]byte("-\nnot a count\n"))} {
		cmd := exec.Command(sb.argv[0], sb.argv[1:]...)
		cmd.Env = sb.env
		cmd.Stdin = bytes.NewReader(in)
		err := cmd.Run()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%q", in)
		require.Equal(t, 125, ee.ExitCode(), "%q", in)
	}

	dir := t.TempDir()
	script := filepath.Join(dir, "script.py")
	require.NoError(t, os.WriteFile(script, []byte("import resource, json, sys\nprint(json.dumps(resource.getrlimit(resource.RLIMIT_CPU)))\n"), 0o600))
	job, ok = warmJob(Request{Argv: append(pyPrefix[:3:3], script), Env: pyEnv}, 7)
	require.True(t, ok)
	out, err := standbyCmd(sb, job, "").CombinedOutput()
	require.NoError(t, err, string(out))
	var lim []int
	require.NoError(t, json.Unmarshal(out, &lim))
	require.Equal(t, []int{7, 7}, lim)
}

func TestStandbyFor(t *testing.T) {
	hostStandby(t)
	require.NotNil(t, standbyFor([]string{"/usr/bin/python3", "-I"}, pyEnv))
	for _, c := range []struct{ prefix, env []string }{
		{nil, pyEnv},
		{[]string{"/usr/bin/bash"}, pyEnv},
		{[]string{"/usr/bin/python3"}, pyEnv},       // no -I: sys.path[0] would differ
		{[]string{"/usr/bin/python3", "-B"}, pyEnv}, // the same
		{[]string{"python3", "-I"}, pyEnv},
		{[]string{"/usr/bin/python3-config"}, pyEnv},
		{[]string{"/usr/bin/python3", "-c"}, pyEnv},
		{[]string{"/usr/bin/python3", "-X", "dev"}, pyEnv},
		{[]string{"/usr/bin/python3", "-m"}, pyEnv},
		{pyPrefix, []string{"PATH=/usr/bin"}}, // no HOME
		{[]string{"/nonexistent/python3"}, pyEnv},
	} {
		require.Nil(t, standbyFor(c.prefix, c.env), "%q %q", c.prefix, c.env)
	}
	require.True(t, isPython3("/usr/bin/python3.11"))
	require.False(t, isPython3("/usr/bin/python3.x"))
	require.False(t, isPython3("/usr/bin/python3."))
}
