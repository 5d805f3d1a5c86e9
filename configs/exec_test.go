package configs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExecConfigErrors(t *testing.T) {
	tests := []struct{ name, file, want string }{
		{"unknown interpreter", "exec:\n  interpreters: [python, ruby]\n", `exec.interpreters: "ruby" is not one of`},
		{"pids below gVisor's floor", "exec:\n  limits:\n    pids: 64\n", "exec.limits.pids: 64 is below 1024"},
		{"unknown backend", "exec:\n  backend: docker\n", `exec.backend: "docker" is not one of auto, runsc, bwrap`},
		{"timeout above max", "exec:\n  limits:\n    timeout: 90s\n", "exec.limits.timeout: 1m30s is more than exec.limits.max_timeout"},
		{"relative program", "exec:\n  commands:\n    - name: ls\n      argv: [ls]\n", "exec.commands[0].argv: must start with the program's absolute path"},
		{"unknown key in a command", "exec:\n  commands:\n    - name: ls\n      argv: [/usr/bin/ls]\n      shell: true\n",
			"file.yaml:5: exec.commands[0].shell: unknown key"},
		{"duplicate command", "exec:\n  commands:\n    - {name: ls, argv: [/usr/bin/ls]}\n    - {name: ls, argv: [/usr/bin/ls]}\n",
			`exec.commands[1].name: "ls" is declared twice`},
		{"unknown weaker limit", "exec:\n  accept_weaker_limits: [memory, disk]\n", `exec.accept_weaker_limits: "disk" is not one of memory, pids, cpu`},
		{"warm pool too large", "exec:\n  warm_pool: 50\n", "exec.warm_pool: 50 is outside 0..8"},
		{"negative warm pool", "exec:\n  warm_pool: -1\n", "exec.warm_pool: -1 is outside 0..8"},
		{"bad pattern", "exec:\n  commands:\n    - {name: ls, argv: [/usr/bin/ls], arg_pattern: \"[\"}\n", "exec.commands[0].arg_pattern: not a regular expression"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			writeFile(t, "file.yaml", tc.file)
			_, err := Load(Options{File: "file.yaml"})
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestExecWidenings(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", `
exec:
  workspace_writable: true
  limits:
    memory_bytes: 1073741824
    cpus: 0.5
  commands:
    - {name: git_status, argv: [/usr/bin/git, status], allow_flags: true}
`)
	l, err := Load(Options{File: "file.yaml"})
	require.NoError(t, err)
	require.Equal(t, []string{
		"exec.workspace_writable is true: scripts can change the workspace (from file.yaml)",
		"exec.limits.memory_bytes raised to 1073741824 (from file.yaml)",
		`exec.commands allows "git_status": [/usr/bin/git status] (from file.yaml)`,
		`exec.commands "git_status" accepts flags from the model`,
	}, l.Widenings, "a tighter cpus is not a widening")
}

func TestLimitsSetAndAccepted(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", "exec:\n  limits:\n    memory_bytes: 268435456\n  accept_weaker_limits: [memory]\n")
	t.Setenv("TOOLWARDEN_EXEC_LIMITS_CPUS", "0.5")
	l, err := Load(Options{File: "file.yaml"})
	require.NoError(t, err)
	require.Equal(t, []string{"cpu", "memory"}, l.Config.Exec.LimitsSet, "set in the file or the environment; pids is the default")
	require.Equal(t, []string{"memory"}, l.Config.Exec.AcceptWeakerLimits)
	require.Contains(t, strings.Join(l.Widenings, "\n"), "exec.accept_weaker_limits: memory may be enforced less strictly than exec.limits.memory_bytes")

	isolate(t)
	l, err = Load(Options{})
	require.NoError(t, err)
	require.Empty(t, l.Config.Exec.LimitsSet, "defaults are not the operator's")
}
