package exec

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/sandbox"
)

// fakeRunner records requests; it is for the argument checks, which must
// refuse hostile input before any process starts.
type fakeRunner struct{ reqs []sandbox.Request }

func (f *fakeRunner) Run(_ context.Context, req sandbox.Request) (sandbox.Result, error) {
	f.reqs = append(f.reqs, req)
	return sandbox.Result{ExitCode: 0, Stdout: []byte("ok")}, nil
}
func (f *fakeRunner) Name() string { return "fake" }

func testConfig(t *testing.T) configs.Exec {
	l, err := configs.Load(configs.Options{})
	require.NoError(t, err)
	cfg := l.Config.Exec
	cfg.Commands = []configs.Command{
		{Name: "git_diff", Argv: []string{"/usr/bin/git", "diff", "--"}, MaxArgs: 2},
		{Name: "echo_flags", Argv: []string{"/usr/bin/echo"}, MaxArgs: 3, AllowFlags: true, ArgPattern: `[a-z-]+`},
	}
	return cfg
}

func TestRunScriptRefusesBeforeRunning(t *testing.T) {
	f := &fakeRunner{}
	s := New(testConfig(t), "/ws").Bind(f, Toolchain{})
	cases := []struct {
		name string
		in   RunScriptIn
		code toolerr.Code
	}{
		{"command injection in interpreter", RunScriptIn{Interpreter: "python; rm -rf /", Script: "print(1)"}, toolerr.InvalidInterpreter},
		{"interpreter with flag", RunScriptIn{Interpreter: "bash -c", Script: "id"}, toolerr.InvalidInterpreter},
		{"interpreter path", RunScriptIn{Interpreter: "/usr/bin/python3", Script: "print(1)"}, toolerr.InvalidInterpreter},
		{"interpreter flag", RunScriptIn{Interpreter: "-c", Script: "id"}, toolerr.InvalidInterpreter},
		{"interpreter case", RunScriptIn{Interpreter: "Python", Script: "print(1)"}, toolerr.InvalidInterpreter},
		{"go not set up", RunScriptIn{Interpreter: "go", Script: "package main"}, toolerr.InvalidInterpreter},
		{"empty script", RunScriptIn{Interpreter: "bash", Script: "  \n"}, toolerr.InvalidArgument},
		{"NUL in script", RunScriptIn{Interpreter: "bash", Script: "echo\x00x"}, toolerr.InvalidArgument},
		{"NUL in arg", RunScriptIn{Interpreter: "bash", Script: "echo", Args: []string{"a\x00b"}}, toolerr.InvalidArgument},
		{"too many args", RunScriptIn{Interpreter: "bash", Script: "echo", Args: make([]string, 65)}, toolerr.InvalidArgument},
		{"timeout above max", RunScriptIn{Interpreter: "bash", Script: "echo", TimeoutSeconds: 61}, toolerr.InvalidArgument},
		{"negative timeout", RunScriptIn{Interpreter: "bash", Script: "echo", TimeoutSeconds: -1}, toolerr.InvalidArgument},
		{"too large", RunScriptIn{Interpreter: "bash", Script: "echo", Stdin: string(make([]byte, 2<<20))}, toolerr.TooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.scriptRequest(tc.in)
			require.Equal(t, tc.code, toolerr.CodeOf(err), "%v", err)
		})
	}
	require.Empty(t, f.reqs, "nothing ran")
}

func TestRunScriptRequest(t *testing.T) {
	s := New(testConfig(t), "/ws").Bind(&fakeRunner{}, Toolchain{})
	req, err := s.scriptRequest(RunScriptIn{Interpreter: "python", Script: "print(1)", Args: []string{"$(id)", "; ls", "--x"}, Stdin: "in", TimeoutSeconds: 5})
	require.NoError(t, err)
	require.Equal(t, []string{"/usr/bin/python3", "-I", "-B", "/run/toolwarden/script.py", "$(id)", "; ls", "--x"}, req.Argv,
		"the script is a file, never on the command line; args are literal argv elements")
	require.Equal(t, "print(1)", string(req.Files["script.py"]))
	require.Equal(t, 5*time.Second, req.Limits.Timeout)
	require.False(t, req.WorkspaceWritable)
	for _, kv := range req.Env {
		require.NotContains(t, kv, "AWS_", "no server environment")
	}
}

func TestRunCommandRefusesFlagsAndExtraArgs(t *testing.T) {
	s := New(testConfig(t), "/ws").Bind(&fakeRunner{}, Toolchain{})
	git := s.cfg.Commands[0]
	cases := []struct {
		name string
		c    configs.Command
		args []string
		code toolerr.Code
	}{
		{"flag injection", git, []string{"--output=/tmp/x"}, toolerr.FlagNotAllowed},
		{"short flag", git, []string{"-o"}, toolerr.FlagNotAllowed},
		{"too many", git, []string{"a", "b", "c"}, toolerr.InvalidArgument},
		{"pattern mismatch", s.cfg.Commands[1], []string{"UPPER"}, toolerr.InvalidArgument},
		{"pattern is anchored", s.cfg.Commands[1], []string{"ok; rm"}, toolerr.InvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.commandRequest(tc.c, RunCommandIn{Command: tc.c.Name, Args: tc.args})
			require.Equal(t, tc.code, toolerr.CodeOf(err), "%v", err)
		})
	}
	req, err := s.commandRequest(git, RunCommandIn{Command: "git_diff", Args: []string{"a.go"}})
	require.NoError(t, err)
	require.Equal(t, []string{"/usr/bin/git", "diff", "--", "a.go"}, req.Argv)
	req, err = s.commandRequest(s.cfg.Commands[1], RunCommandIn{Command: "echo_flags", Args: []string{"-n"}})
	require.NoError(t, err)
	require.Equal(t, []string{"/usr/bin/echo", "-n"}, req.Argv)
}

func TestSchemasCarryTheAllowlists(t *testing.T) {
	s := New(testConfig(t), "/ws").Bind(&fakeRunner{}, Toolchain{})
	for _, tool := range s.Tools() {
		var schema struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		}
		require.NoError(t, json.Unmarshal(tool.Tool.RawInputSchema, &schema))
		switch tool.Tool.Name {
		case "run_script":
			require.Equal(t, []string{"bash", "python"}, schema.Properties["interpreter"].Enum)
		case "run_command":
			require.Equal(t, []string{"echo_flags", "git_diff"}, schema.Properties["command"].Enum)
		}
	}
}

// fakeWarmer records what it is asked to keep warm.
type fakeWarmer struct {
	fakeRunner
	mu     sync.Mutex
	size   int
	shapes []sandbox.Request
	// boots counts the calls that booted a pool, empties those that
	// emptied it.
	boots, empties int
}

func (f *fakeWarmer) Warm(size int, shapes ...sandbox.Request) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.size, f.shapes = size, shapes
	if size > 0 {
		f.boots++
	} else {
		f.empties++
	}
	return nil
}

func (f *fakeWarmer) WarmStats() sandbox.WarmStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return sandbox.WarmStats{Size: f.size}
}

// counts are the pool's size and how often it was booted and emptied.
func (f *fakeWarmer) counts() (size, boots, empties int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.size, f.boots, f.empties
}

// The sandboxes booted ahead have the mounts and limits of a default
// run_script and run_command run, so that those runs take them.
func TestWarmShapesAreTheDefaultRuns(t *testing.T) {
	cfg := testConfig(t)
	cfg.Commands[1].WorkspaceWritable = true
	w := &fakeWarmer{}
	s := New(cfg, "/ws").Bind(w, Toolchain{})
	n, err := s.KeepWarm(func(err error) { t.Error(err) })
	require.NoError(t, err)
	require.Equal(t, cfg.WarmPool, n)
	require.Nil(t, w.shapes, "nothing is booted before the tools are offered")
	s.Offered()
	defer s.Close()
	script, err := s.scriptRequest(RunScriptIn{Interpreter: "python", Script: "pass"})
	require.NoError(t, err)
	cmd, err := s.commandRequest(cfg.Commands[1], RunCommandIn{Command: "echo_flags"})
	require.NoError(t, err)
	shape := func(r sandbox.Request) sandbox.Request {
		l := r.Limits
		l.Timeout = cfg.Limits.MaxTimeout // booted for the longest run
		return sandbox.Request{Workspace: r.Workspace, WorkspaceWritable: r.WorkspaceWritable, Cache: r.Cache, Limits: l}
	}
	// A python run's shape names its interpreter and environment, for a
	// stand-by started ahead.
	py := shape(script)
	py.Argv, py.Env = script.Argv[:len(script.Argv)-1], script.Env
	require.Equal(t, []string{"/usr/bin/python3", "-I", "-B"}, py.Argv)
	require.Contains(t, w.shapes, py)
	require.Contains(t, w.shapes, shape(cmd))
	require.True(t, s.WarmsPython(), "config check says python starts ahead")

	cfg.WarmPool = 0
	w = &fakeWarmer{}
	s = New(cfg, "/ws").Bind(w, Toolchain{})
	n, err = s.KeepWarm(func(err error) { t.Error(err) })
	require.NoError(t, err)
	require.Zero(t, n)
	s.Offered()
	require.Nil(t, w.shapes, "exec.warm_pool 0 boots nothing ahead")
	require.False(t, New(cfg, "/ws").Bind(w, Toolchain{}).WarmsPython())
}
