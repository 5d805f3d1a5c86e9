package sandbox

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The warm sandbox's init hands the program exactly its argv, environment
// and stdin, whatever bytes they hold; it is run here on the host.
func TestWarmInitPassesArgvEnvAndStdin(t *testing.T) {
	argv := []string{"/usr/bin/python3", "-I", "-c", "import os,sys,json; print(json.dumps([sys.argv[1:], dict(os.environ), sys.stdin.read()]))",
		"plain", "two words", "line1\nline2", "trailing\n", "\n", "", `back\slash $HOME "q" 'q' *`, "ünï ✓", "-e=x"}
	env := []string{"PATH=/usr/bin", "EMPTY=", "MULTI=a\nb", "EQ=x=y"}
	job, ok := warmJob(Request{Argv: argv, Env: env}, 0)
	require.True(t, ok)
	cmd := exec.Command("/bin/sh", "-c", warmInit, "toolwarden-warm")
	cmd.Env = []string{"SERVER_SECRET=x", "HOME=/init"} // the init's environment never reaches the program, but for HOME when the run sets none
	cmd.Stdin = bytes.NewReader(append(job, "stdin\nbytes"...))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	want := `[["plain", "two words", "line1\nline2", "trailing\n", "\n", "", "back\\slash $HOME \"q\" 'q' *", "\u00fcn\u00ef \u2713", "-e=x"], ` +
		`{"PATH": "/usr/bin", "EMPTY": "", "MULTI": "a\nb", "EQ": "x=y", "LC_CTYPE": "C.UTF-8", "HOME": "/init"}, "stdin\nbytes"]`
	require.JSONEq(t, want, strings.TrimSpace(string(out)))

	job, ok = warmJob(Request{Argv: []string{"/usr/bin/printenv", "HOME"}, Env: []string{"HOME=/mine"}}, 0)
	require.True(t, ok)
	cmd = exec.Command("/bin/sh", "-c", warmInit, "toolwarden-warm")
	cmd.Env = []string{"HOME=/init"}
	cmd.Stdin = bytes.NewReader(job)
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, "/mine\n", string(out), "the run's own HOME wins")
}

func TestWarmInitEndsOnACutInput(t *testing.T) {
	job, ok := warmJob(Request{Argv: []string{"/usr/bin/true"}, Env: []string{"A=1"}}, 0)
	require.True(t, ok)
	for _, in := range [][]byte{nil, job[:len(job)-3]} {
		cmd := exec.Command("/bin/sh", "-c", warmInit, "toolwarden-warm")
		cmd.Stdin = bytes.NewReader(in)
		err := cmd.Run()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
		require.Equal(t, 125, ee.ExitCode())
	}
}

func TestWarmJobRunsColdWhatEnvCouldMisread(t *testing.T) {
	for _, req := range []Request{
		{},
		{Argv: []string{"relative"}},
		{Argv: []string{"/usr/bin/a=b"}},
		{Argv: []string{"/usr/bin/true"}, Env: []string{"NOEQUALS"}},
		{Argv: []string{"/usr/bin/true"}, Env: []string{"=x"}},
		{Argv: []string{"/usr/bin/true", "nul\x00"}},
	} {
		_, ok := warmJob(req, 0)
		require.False(t, ok, "%q %q", req.Argv, req.Env)
	}
}

// Rootless, a run lowers the sandbox's RLIMIT_CPU to its own, soft and
// hard, as its cold spec would set it.
func TestWarmInitSetsTheRunsCPULimit(t *testing.T) {
	job, ok := warmJob(Request{Argv: []string{"/bin/sh", "-c", "ulimit -St; ulimit -Ht"}}, 7)
	require.True(t, ok)
	cmd := exec.Command("/bin/sh", "-c", warmInit, "toolwarden-warm")
	cmd.Stdin = bytes.NewReader(job)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, "7\n7\n", string(out))
}

type wrapped struct{ Runner }

func (w wrapped) Unwrap() Runner { return w.Runner }

// A backend wrapped to trace or count its runs still boots sandboxes ahead.
func TestWarmerOfUnwraps(t *testing.T) {
	r := &Runsc{}
	w, ok := WarmerOf(wrapped{wrapped{r}})
	require.True(t, ok)
	require.Same(t, r, w)
	_, ok = WarmerOf(wrapped{&Bwrap{}})
	require.False(t, ok)
	_, ok = WarmerOf(nil)
	require.False(t, ok)
}
