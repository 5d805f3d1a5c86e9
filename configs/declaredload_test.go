package configs

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const oneTool = "tools:\n  - name: t_one\n    description: d\n    type: cli\n    command: [ls, \"{a}\"]\n    params:\n      - name: a\n        type: string\n        pattern: \"(\"\n"

// refusePattern is a ToolChecker that finds fault with every param's
// pattern and resolves the program, as declared.Check would.
func refusePattern(t *DeclaredTool, add func(key, format string, args ...any)) {
	t.Command[0] = "/usr/bin/" + t.Command[0]
	for i := range t.Params {
		add(fmt.Sprintf("params[%d].pattern", i), "is not liked")
	}
}

// TestDeclaredToolsNeedAChecker: configs knows the YAML of a declared tool,
// not its rules; a loader given none refuses the tools instead of letting
// unchecked ones through.
func TestDeclaredToolsNeedAChecker(t *testing.T) {
	dir := isolate(t)
	file := filepath.Join(dir, "toolwarden.yaml")
	writeFile(t, file, oneTool)
	_, err := Load(Options{File: file})
	require.ErrorContains(t, err, file+":2: tools: declared tools cannot be checked here")

	writeFile(t, file, "log: {level: info}\n")
	_, err = Load(Options{File: file})
	require.NoError(t, err, "no tools, no checker needed")
}

// TestToolCheckerKeysNameTheirLine: what the checker reports under a key
// relative to the tool comes back as file:line: tools[i].key, for the
// config file and for tools.d files; what it completes is kept.
func TestToolCheckerKeysNameTheirLine(t *testing.T) {
	dir := isolate(t)
	file := filepath.Join(dir, "toolwarden.yaml")
	writeFile(t, file, oneTool)
	extra := filepath.Join(dir, ToolsDir, "x.yaml")
	writeFile(t, extra, "- name: t_two\n  description: d\n  type: cli\n  command: [ls]\n  params: [{name: b, type: string}]\n")
	_, err := Load(Options{File: file, CheckTool: refusePattern})
	require.ErrorContains(t, err, file+":9: tools[0].params[0].pattern: is not liked")
	require.ErrorContains(t, err, extra+":5: tools[0].params[0].pattern: is not liked")

	writeFile(t, extra, "- name: t_two\n  description: d\n  type: cli\n  command: [ls]\n")
	writeFile(t, file, "log: {level: info}\n")
	l, err := Load(Options{File: file, CheckTool: refusePattern})
	require.NoError(t, err)
	require.Equal(t, "/usr/bin/ls", l.Config.Tools[0].Command[0], "the checker may complete a tool")
	require.Contains(t, strings.Join(l.Widenings, "\n"), `tools declares cli tool "t_two": runs ["/usr/bin/ls"] in the sandbox (from `+extra+":1)")
}

// TestToolsDirErrorsNameTheirFile: a tools.d file's shape, keys and
// duplicate names are configs' to check, each with its file and line.
func TestToolsDirErrorsNameTheirFile(t *testing.T) {
	dir := isolate(t)
	file := filepath.Join(dir, "toolwarden.yaml")
	writeFile(t, file, "tools:\n  - name: t_one\n    description: d\n    type: cli\n    command: [ls]\n")
	extra := filepath.Join(dir, ToolsDir, "x.yaml")
	for yaml, want := range map[string]string{
		"name: x\n":                   extra + ":1: must be a list of tools",
		"- name: t_two\n  bogus: 1\n": extra + ":2: tools[0].bogus: unknown key",
		"- name: t_one\n  description: d\n  type: cli\n  command: [ls]\n": extra + `:1: tools[0].name: "t_one" is also declared at ` + file + ":2",
	} {
		writeFile(t, extra, yaml)
		_, err := Load(Options{File: file, CheckTool: func(*DeclaredTool, func(string, string, ...any)) {}})
		require.ErrorContains(t, err, want)
	}
}
