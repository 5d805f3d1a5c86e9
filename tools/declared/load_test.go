package declared

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
)

const grepTool = `
tools:
  - name: grep_code
    description: Search one file for a fixed string.
    type: cli
    requires_approval: false
    annotations: {read_only: true, idempotent: true}
    timeout: 10s
    command: [grep, -n, -F, --, "{query}", "{file}"]
    params:
      - name: query
        type: string
        required: true
        max_length: 200
      - name: file
        type: filepath
        required: true
`

func TestDeclaredToolLoads(t *testing.T) {
	dir := isolate(t)
	file := filepath.Join(dir, "toolwarden.yaml")
	writeFile(t, file, grepTool)
	writeFile(t, filepath.Join(dir, "tools.d", "search.yaml"), `
- name: web_search
  description: Search the web.
  type: http
  base_url: https://search.example.com/api?format=json
  api_key_env: SEARCH_KEY
  params:
    - {name: q, type: string, required: true}
    - {name: site, type: url, hosts: [example.com, "*.example.org"]}
`)
	writeFile(t, filepath.Join(dir, "tools.d", "more.yaml"), `
tools:
  - name: post_note
    description: Post a note.
    type: http
    method: post
    base_url: http://127.0.0.1:9/notes
    params: [{name: text, type: string, required: true}, {name: urgent, type: boolean}]
`)
	writeFile(t, filepath.Join(dir, "tools.d", "ignored.txt"), "not yaml: [")
	l, err := configs.Load(configs.Options{File: file, CheckTool: Check})
	require.NoError(t, err)
	require.Len(t, l.Config.Tools, 3)
	g := l.Config.Tools[0]
	require.Equal(t, "/usr/bin/grep", g.Command[0], "a bare program is resolved on the default path")
	require.Equal(t, 10*time.Second, g.Timeout)
	require.False(t, g.ApprovalRequired())
	require.True(t, g.Annotations.ReadOnly)
	require.Equal(t, 200, g.Params[0].MaxLength)
	post := l.Config.Tools[1]
	require.Equal(t, "post_note", post.Name, "tools.d files are read in name order")
	require.Equal(t, "POST", post.Method)
	require.Equal(t, "body", post.ParamIn(post.Params[0]))
	require.True(t, post.ApprovalRequired(), "approval is the default")
	ws := l.Config.Tools[2]
	require.Equal(t, "GET", ws.Method)
	require.Equal(t, "query", ws.ParamIn(ws.Params[0]))

	joined := strings.Join(l.Widenings, "\n")
	require.Contains(t, joined, `tools declares cli tool "grep_code"`)
	require.Contains(t, joined, "toolwarden.yaml:3)")
	require.Contains(t, joined, `tools "grep_code" runs without human approval`)
	require.Contains(t, joined, `tools declares http tool "web_search": sends GET requests to https://search.example.com/api?format=json (from `+filepath.Join(dir, "tools.d", "search.yaml")+":2)")
}

// TestDeclaredToolErrors: each bad declaration refuses the start with the
// file, line, key and reason.
func TestDeclaredToolErrors(t *testing.T) {
	cli := func(extra string) string {
		return "tools:\n  - name: t_cli\n    description: d\n    type: cli\n" + extra
	}
	web := func(extra string) string {
		return "tools:\n  - name: t_web\n    description: d\n    type: http\n" + extra
	}
	cases := []struct{ name, yaml, want string }{
		{"unknown type", "tools:\n  - name: t_x\n    description: d\n    type: shell\n", `:4: tools[0].type: "shell" is not a tool type; use cli or http`},
		{"seed's api type", "tools:\n  - name: t_x\n    description: d\n    type: api\n", `tools[0].type: "api" is called "http" here`},
		{"unknown key", cli("    handler: cli_handler\n"), `:5: tools[0].handler: unknown key`},
		{"bad name", "tools:\n  - name: Bad.Name\n    description: d\n    type: cli\n    command: [ls]\n", `:2: tools[0].name: "Bad.Name" must be snake_case`},
		{"built-in name", "tools:\n  - name: read_file\n    description: d\n    type: cli\n    command: [ls]\n", `tools[0].name: "read_file" is a built-in tool's name`},
		{"no description", "tools:\n  - name: t_x\n    type: cli\n    command: [ls]\n", `tools[0].description: is empty`},
		{"empty command", cli(""), `tools[0].command: is empty`},
		{"placeholder without param", cli(`    command: [ls, "{dir}"]` + "\n"), `:5: tools[0].command[1]: placeholder {dir} names no param`},
		{"param never used", cli("    command: [ls]\n    params:\n      - {name: dir, type: string}\n"), `:7: tools[0].params[0].name: "dir" is never used in command`},
		{"two placeholders", cli(`    command: [ls, "{a}{b}"]` + "\n    params: [{name: a, type: string}, {name: b, type: string}]\n"), `tools[0].command[1]: "{a}{b}" holds 2 placeholders`},
		{"program placeholder", cli(`    command: ["{prog}"]` + "\n    params: [{name: prog, type: string}]\n"), `tools[0].command[0]: the program must be fixed`},
		{"model-chosen flag", cli(`    command: [ls, "-{f}"]` + "\n    params: [{name: f, type: string}]\n"), `tools[0].command[1]: "-{f}" lets the model choose a flag's name`},
		{"value glued to a short flag", cli(`    command: [grep, "-n{f}", .]` + "\n    params: [{name: f, type: string}]\n"), `tools[0].command[1]: "-n{f}" glues the value to a flag without '='`},
		{"optional after flag", cli(`    command: [grep, -e, "{p}", .]` + "\n    params: [{name: p, type: string}]\n"), `tools[0].command[2]: optional param "p" stands alone after the flag "-e"`},
		{"optional with a prefix after flag", cli(`    command: [sort, -o, "sorted_{s}", "{f}"]` + "\n    params: [{name: s, type: string}, {name: f, type: filepath, required: true}]\n"), `tools[0].command[2]: optional param "s" stands alone after the flag "-o"`},
		{"program not found", cli("    command: [no-such-program-xyz]\n"), `tools[0].command[0]: program "no-such-program-xyz" is not found on path`},
		{"relative program path", cli("    command: [./bin/x]\n"), `tools[0].command[0]: "./bin/x" must be an absolute path`},
		{"program outside /usr", cli("    command: [/etc/passwd]\n"), `tools[0].command[0]: "/etc/passwd" is outside /usr, /bin and /sbin`},
		{"duplicate param", cli(`    command: [ls, "{a}"]` + "\n    params: [{name: a, type: string}, {name: a, type: string}]\n"), `tools[0].params[1].name: "a" is declared twice`},
		{"bad pattern", cli(`    command: [ls, "{a}"]` + "\n    params: [{name: a, type: string, pattern: \"(\"}]\n"), `tools[0].params[0].pattern: is not a regular expression`},
		{"unknown param type", cli(`    command: [ls, "{a}"]` + "\n    params: [{name: a, type: float}]\n"), `tools[0].params[0].type: "float" is not a param type`},
		{"bound on wrong type", cli(`    command: [ls, "{a}"]` + "\n    params: [{name: a, type: string, minimum: 1}]\n"), `tools[0].params[0].minimum: applies only to integer params`},
		{"min over max", cli(`    command: [ls, "{a}"]` + "\n    params: [{name: a, type: integer, minimum: 5, maximum: 1}]\n"), `tools[0].params[0].minimum: 5 is more than maximum 1`},
		{"url without hosts", web("    base_url: https://x.example\n    params: [{name: u, type: url}]\n"), `tools[0].params[0].hosts: a url param needs a host allowlist`},
		{"bad env entry", cli("    command: [ls]\n    env: [NOEQUALS]\n"), `tools[0].env[0]: must be KEY=VALUE`},
		{"wrong value type", cli("    command: [ls]\n    timeout: soon\n"), `tools[0].timeout: "soon" is not a duration`},
		{"http key on cli", cli("    command: [ls]\n    base_url: https://x.example\n"), `tools[0].base_url: applies only to http tools`},
		{"no base_url", web(""), `tools[0].base_url: is empty`},
		{"bad scheme", web("    base_url: ftp://x.example/\n"), `tools[0].base_url: "ftp://x.example/" must start with https://`},
		{"plain http remote", web("    base_url: http://api.example.com/\n"), `uses plain http to a non-loopback host`},
		{"credentials in URL", web("    base_url: https://user:pw@api.example.com/\n"), `tools[0].base_url: must not hold credentials`},
		{"bad method", web("    base_url: https://x.example/\n    method: TRACE\n"), `tools[0].method: "TRACE" is not one of`},
		{"secret as value", web("    base_url: https://x.example/\n    api_key_env: sk-live-1234/abcd\n"), `tools[0].api_key_env: is not an environment variable name`},
		{"filepath in http", web("    base_url: https://x.example/\n    params: [{name: f, type: filepath}]\n"), `tools[0].params[0].type: filepath params are for cli tools`},
		{"body on GET", web("    base_url: https://x.example/\n    params: [{name: q, type: string, in: body}]\n"), `tools[0].params[0].in: a GET request has no body`},
		{"param replaces fixed query", web("    base_url: https://x.example/?key=1\n    params: [{name: key, type: string}]\n"), `tools[0].params[0].name: "key" is already fixed in base_url's query`},
		{"read-only destructive", cli("    command: [ls]\n    annotations: {read_only: true, destructive: true}\n"), `tools[0].annotations: a read-only tool cannot be destructive`},
		{"duplicate tool", grepTool + strings.TrimPrefix(grepTool, "\ntools:\n"), `tools[1].name: "grep_code" is also declared at `},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := isolate(t)
			file := filepath.Join(dir, "toolwarden.yaml")
			writeFile(t, file, tc.yaml)
			_, err := configs.Load(configs.Options{File: file, CheckTool: Check})
			require.Error(t, err)
			require.Contains(t, err.Error(), file+":")
			require.Contains(t, err.Error(), tc.want)
			require.NotContains(t, err.Error(), "sk-live", "a secret put where a name belongs is not echoed")
		})
	}
}

func TestToolsDirErrorsNameTheirFile(t *testing.T) {
	dir := isolate(t)
	file := filepath.Join(dir, "toolwarden.yaml")
	writeFile(t, file, grepTool)
	extra := filepath.Join(dir, "tools.d", "x.yaml")
	for yaml, want := range map[string]string{
		"name: x\n": extra + ":1: must be a list of tools",
		"- name: t_one\n  description: d\n  type: cli\n  command: [ls, \"{a}\"]\n": extra + `:4: tools[0].command[1]: placeholder {a} names no param`,
		"- name: t_one\n  bogus: 1\n":                                         extra + ":2: tools[0].bogus: unknown key",
		"- name: grep_code\n  description: d\n  type: cli\n  command: [ls]\n": extra + `:1: tools[0].name: "grep_code" is also declared at ` + file + ":3",
	} {
		writeFile(t, extra, yaml)
		_, err := configs.Load(configs.Options{File: file, CheckTool: Check})
		require.Error(t, err)
		require.Contains(t, err.Error(), want)
	}
}

// isolate runs the test in an empty directory with no TOOLWARDEN_*
// variables and an empty XDG config dir, so nothing outside the test is read.
func isolate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	t.Setenv("HOME", dir)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, configs.EnvPrefix+"_") {
			t.Setenv(k, "") // restores the old value after the test
			require.NoError(t, os.Unsetenv(k))
		}
	}
	return dir
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
}
