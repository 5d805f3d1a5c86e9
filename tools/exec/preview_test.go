package exec

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

func preview(t *testing.T, s *Set, tool string, args any) (string, error) {
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	for _, tl := range s.Tools() {
		if tl.Tool.Name == tool {
			return tl.Meta.Preview(context.Background(), raw)
		}
	}
	t.Fatalf("no tool %s", tool)
	return "", nil
}

func TestPreviewShowsWhatRuns(t *testing.T) {
	f := &fakeRunner{}
	s := New(testConfig(t), "/ws").Bind(f, Toolchain{})
	got, err := preview(t, s, "run_script", RunScriptIn{Interpreter: "python", Script: "import os\nprint(os.listdir('.'))",
		Args: []string{"a b", "$(id)"}, Stdin: "input", TimeoutSeconds: 5})
	require.NoError(t, err)
	require.Equal(t, `Run this python script in the sandbox: ["/usr/bin/python3" "-I" "-B" "/run/toolwarden/script.py" "a b" "$(id)"]
No network; workspace read-only; timeout 5s, memory 512 MiB, 1 CPU, 1024 processes, output 256 KiB per stream.

Script (32 bytes):
import os
print(os.listdir('.'))

Stdin (5 bytes):
input
`, got)

	got, err = preview(t, s, "run_command", RunCommandIn{Command: "git_diff", Args: []string{"a.go"}})
	require.NoError(t, err)
	require.Equal(t, `Run command git_diff in the sandbox: ["/usr/bin/git" "diff" "--" "a.go"]
No network; workspace read-only; timeout 1m0s, memory 512 MiB, 1 CPU, 1024 processes, output 256 KiB per stream.`, got)

	_, err = preview(t, s, "run_command", RunCommandIn{Command: "git_diff", Args: []string{"--output=/tmp/x"}})
	require.Equal(t, toolerr.FlagNotAllowed, toolerr.CodeOf(err), "a call that would be refused is refused before asking")
	_, err = preview(t, s, "run_command", RunCommandIn{Command: "rm"})
	require.Equal(t, toolerr.InvalidSchema, toolerr.CodeOf(err))
	require.Empty(t, f.reqs, "previews run nothing")
}
