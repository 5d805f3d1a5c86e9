package configs

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// defaultTools are the tools the embedded default allows: the read-only
// file tools, and the file writes, which ask the human first (approval).
var defaultTools = []string{
	"read_file", "read_multiple_files", "list_directory", "directory_tree", "search_files", "grep_files", "file_info",
	"write_file", "edit_file", "create_directory", "move_file", "delete_file",
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
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, EnvPrefix+"_") {
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

func sameDir(t *testing.T, want, got string) {
	t.Helper()
	w, err := filepath.EvalSymlinks(want)
	require.NoError(t, err)
	g, err := filepath.EvalSymlinks(got)
	require.NoError(t, err)
	require.Equal(t, w, g)
}

func TestLoadEmbeddedDefault(t *testing.T) {
	dir := isolate(t)
	l, err := Load(Options{})
	require.NoError(t, err)
	require.Empty(t, l.File, "no file exists, so none is read")
	c := l.Config
	sameDir(t, dir, c.Workspace)
	require.True(t, filepath.IsAbs(c.Workspace))
	require.Equal(t, 10000, c.Limits.MaxCallsPerSession)
	require.Equal(t, int64(256<<20), c.Limits.MaxOutputBytesPerSession)
	require.Equal(t, 1<<20, c.Limits.MaxOutputBytesPerCall)
	require.Equal(t, 30*time.Second, c.Limits.CallTimeout)
	require.Equal(t, 30*time.Minute, c.HTTP.SessionIdleTimeout)
	require.Empty(t, c.HTTP.Addr, "stdio by default")
	require.False(t, c.HTTP.AllowRemote)
	require.Equal(t, "info", c.Log.Level)
	require.Empty(t, l.Widenings, "the default widens nothing")
	require.Equal(t, "default", l.Origin("limits.max_calls_per_session"))
	require.NoError(t, l.validate(), "the loaded default validates again")
}

func TestDefaultPolicyIsTheFileTools(t *testing.T) {
	isolate(t)
	l, err := Load(Options{})
	require.NoError(t, err)
	require.ElementsMatch(t, defaultTools, l.Config.Policy.Allow)
	require.Len(t, l.Config.Policy.Allow, 12)
	require.Empty(t, l.Config.Policy.Deny)

	// The embedded file itself says so, and DefaultYAML hands out a copy.
	var def Config
	require.NoError(t, yaml.Unmarshal(DefaultYAML(), &def))
	require.ElementsMatch(t, defaultTools, def.Policy.Allow)
	b := DefaultYAML()
	b[0] = 'X'
	require.NotEqual(t, byte('X'), DefaultYAML()[0])
}

func TestEmbeddedDefaultSetsEveryKey(t *testing.T) {
	// Every key must be in the default: the strict file check knows keys by
	// the struct, but the environment only reaches keys viper has seen.
	keys, err := checkFile("default.yaml", DefaultYAML())
	require.NoError(t, err)
	var walk func(rt reflect.Type, prefix string) []string
	walk = func(rt reflect.Type, prefix string) []string {
		var out []string
		for i := 0; i < rt.NumField(); i++ {
			f := rt.Field(i)
			if f.Tag.Get("yaml") == "-" {
				continue
			}
			key := prefix + f.Tag.Get("yaml")
			if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeFor[time.Duration]() {
				out = append(out, walk(f.Type, key+".")...)
				continue
			}
			out = append(out, key)
		}
		return out
	}
	require.ElementsMatch(t, walk(reflect.TypeFor[Config](), ""), keys)
}

func TestLoadFindsTheFile(t *testing.T) {
	tests := []struct {
		name     string
		cwd      bool // ./toolwarden.yaml exists
		xdg      bool // $XDG_CONFIG_HOME/toolwarden/config.yaml exists
		env      bool // TOOLWARDEN_CONFIG names a third file
		wantFile string
		wantLog  string
	}{
		{name: "none", wantFile: "", wantLog: "info"},
		{name: "current directory", cwd: true, wantFile: "toolwarden.yaml", wantLog: "debug"},
		{name: "XDG config dir", xdg: true, wantFile: "xdg/toolwarden/config.yaml", wantLog: "warn"},
		{name: "current directory before XDG", cwd: true, xdg: true, wantFile: "toolwarden.yaml", wantLog: "debug"},
		{name: "TOOLWARDEN_CONFIG before the search", cwd: true, xdg: true, env: true, wantFile: "elsewhere.yaml", wantLog: "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := isolate(t)
			if tt.cwd {
				writeFile(t, "toolwarden.yaml", "log:\n  level: debug\n")
			}
			if tt.xdg {
				writeFile(t, filepath.Join(dir, "xdg", "toolwarden", "config.yaml"), "log:\n  level: warn\n")
			}
			if tt.env {
				writeFile(t, "elsewhere.yaml", "log:\n  level: error\n")
				t.Setenv("TOOLWARDEN_CONFIG", "elsewhere.yaml")
			}
			l, err := Load(Options{})
			require.NoError(t, err)
			require.Equal(t, tt.wantLog, l.Config.Log.Level)
			if tt.wantFile == "" {
				require.Empty(t, l.File)
				return
			}
			require.True(t, strings.HasSuffix(l.File, tt.wantFile), "file %q", l.File)
		})
	}
}

func TestFileOverridesDefault(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", `
limits:
  max_calls_per_session: 50
  call_timeout: 2m
policy:
  allow: [read_file, run_script]
  deny: ["delete_*"]
`)
	l, err := Load(Options{File: "file.yaml"})
	require.NoError(t, err)
	c := l.Config
	require.Equal(t, "file.yaml", l.File)
	require.Equal(t, 50, c.Limits.MaxCallsPerSession)
	require.Equal(t, 2*time.Minute, c.Limits.CallTimeout)
	require.Equal(t, 1<<20, c.Limits.MaxOutputBytesPerCall, "keys the file does not set keep their default")
	require.Equal(t, []string{"read_file", "run_script"}, c.Policy.Allow, "a list in the file replaces the default list")
	require.Equal(t, []string{"delete_*"}, c.Policy.Deny)
	require.Equal(t, "file.yaml", l.Origin("limits.max_calls_per_session"))
	require.Equal(t, "default", l.Origin("limits.max_output_bytes_per_call"))
	require.Equal(t, []string{`policy.allow adds "run_script" (from file.yaml)`}, l.Widenings)
}

func TestEnvOverridesFile(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", "limits:\n  max_calls_per_session: 50\n")
	t.Setenv("TOOLWARDEN_LIMITS_MAX_CALLS_PER_SESSION", "5")
	t.Setenv("TOOLWARDEN_LOG_LEVEL", "debug")
	l, err := Load(Options{File: "file.yaml"})
	require.NoError(t, err)
	require.Equal(t, 5, l.Config.Limits.MaxCallsPerSession)
	require.Equal(t, "debug", l.Config.Log.Level)
	require.Equal(t, "env TOOLWARDEN_LIMITS_MAX_CALLS_PER_SESSION", l.Origin("limits.max_calls_per_session"))
}

func TestFlagsOverrideEnvAndFile(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", "log:\n  level: warn\nhttp:\n  addr: 127.0.0.1:9000\n")
	t.Setenv("TOOLWARDEN_LOG_LEVEL", "error")
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.String("log-level", "info", "")
	fs.String("http", "", "")
	require.NoError(t, fs.Parse([]string{"--log-level", "debug"}))

	l, err := Load(Options{File: "file.yaml", Flags: fs, FlagKeys: map[string]string{"log-level": "log.level", "http": "http.addr"}})
	require.NoError(t, err)
	require.Equal(t, "debug", l.Config.Log.Level)
	require.Equal(t, "flag --log-level", l.Origin("log.level"))
	require.Equal(t, "127.0.0.1:9000", l.Config.HTTP.Addr, "a flag the user did not set overrides nothing")

	_, err = Load(Options{Flags: fs, FlagKeys: map[string]string{"nope": "log.level"}})
	require.ErrorContains(t, err, "unknown flag nope")
}

func TestAllowDenyOptions(t *testing.T) {
	isolate(t)
	l, err := Load(Options{Allow: []string{"run_script", "read_file"}, Deny: []string{"grep_*"}})
	require.NoError(t, err)
	require.Equal(t, append(slices.Clone(defaultTools), "run_script", "read_file"), l.Config.Policy.Allow,
		"--allow appends to the configured list")
	require.Equal(t, []string{"grep_*"}, l.Config.Policy.Deny, "--deny appends to the configured list")
	require.Equal(t, []string{`policy.allow adds "run_script" (from flag --allow)`}, l.Widenings,
		"an allow already in the default is no widening")

	_, err = Load(Options{Deny: []string{"["}})
	require.ErrorContains(t, err, "policy.deny")
}

func TestWideningsNameTheirSource(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", `
http:
  addr: 0.0.0.0:8080
  allow_remote: true
  allowed_hosts: [mcp.example.com]
  allowed_origins: ["https://app.example.com"]
`)
	l, err := Load(Options{File: "file.yaml"})
	require.NoError(t, err)
	require.Equal(t, []string{
		"http.allow_remote is true (from file.yaml)",
		`http.allowed_hosts adds "mcp.example.com" (from file.yaml)`,
		`http.allowed_origins adds "https://app.example.com" (from file.yaml)`,
	}, l.Widenings)
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		file string            // content of file.yaml; "" means no file
		env  map[string]string // TOOLWARDEN_* variables
		opts Options
		want []string // substrings of the error
	}{
		{name: "unknown top-level key", file: "log:\n  level: info\nbogus: 1\n",
			want: []string{"file.yaml:3: bogus: unknown key", "known here: capabilities, workspace, policy"}},
		{name: "unknown nested key", file: "limits:\n  max_calls_per_session: 5\n  bogus: 1\n",
			want: []string{"file.yaml:3: limits.bogus: unknown key", "max_calls_per_session"}},
		{name: "misspelt key", file: "polcy:\n  allow: [write_file]\n",
			want: []string{"file.yaml:1: polcy: unknown key"}},
		{name: "wrong type", file: "limits:\n  max_calls_per_session: many\n",
			want: []string{"file.yaml:2: limits.max_calls_per_session:", "many"}},
		{name: "string where a list belongs", file: "policy:\n  allow: read_file\n",
			want: []string{"file.yaml:2: policy.allow:"}},
		{name: "section that is not a mapping", file: "limits: 5\n",
			want: []string{"file.yaml:1: limits: must be a mapping"}},
		{name: "invalid duration", file: "limits:\n  call_timeout: forever\n",
			want: []string{"file.yaml:2: limits.call_timeout:", "forever"}},
		{name: "duration out of range", file: "limits:\n  call_timeout: 2h\n",
			want: []string{"file.yaml:2: limits.call_timeout: must be between"}},
		{name: "grace out of range", file: "limits:\n  timeout_grace: 2m\n",
			want: []string{"file.yaml:2: limits.timeout_grace: must be between 0 and 1m0s, got 2m0s"}},
		{name: "negative grace", file: "limits:\n  timeout_grace: -1s\n",
			want: []string{"file.yaml:2: limits.timeout_grace: must be between"}},
		{name: "no abandoned calls allowed", file: "limits:\n  max_abandoned: 0\n",
			want: []string{"file.yaml:2: limits.max_abandoned: must be greater than 0, got 0"}},
		{name: "negative limit", file: "log:\n  level: info\nlimits:\n  max_calls_per_session: -1\n",
			want: []string{"file.yaml:4: limits.max_calls_per_session: must be greater than 0, got -1"}},
		{name: "zero limit", file: "fs:\n  max_read_bytes: 0\n",
			want: []string{"file.yaml:2: fs.max_read_bytes: must be greater than 0"}},
		{name: "invalid glob in deny", file: "policy:\n  deny: [\"write_[\"]\n",
			want: []string{"file.yaml:2: policy.deny:", `"write_[" is not a valid tool-name glob`}},
		{name: "empty glob in allow", file: "policy:\n  allow: [\"\"]\n",
			want: []string{"file.yaml:2: policy.allow:", "not a valid tool-name glob"}},
		{name: "non-loopback addr without allow_remote", file: "http:\n  addr: 0.0.0.0:8080\n",
			want: []string{"file.yaml:2: http.addr:", "not a loopback address", "allow_remote"}},
		{name: "addr without port", file: "http:\n  addr: localhost\n",
			want: []string{"file.yaml:2: http.addr:", "not host:port"}},
		{name: "bad log level", file: "log:\n  level: loud\n",
			want: []string{"file.yaml:2: log.level:", `"loud" is not one of debug, info, warn, error`}},
		{name: "workspace that does not exist", file: "workspace: ./missing\n",
			want: []string{"file.yaml:1: workspace:", "missing", "no such file"}},
		{name: "workspace that is a file", file: "workspace: file.yaml\n",
			want: []string{"file.yaml:1: workspace:", "not a directory"}},
		{name: "every problem is reported", file: "log:\n  level: loud\nlimits:\n  max_calls_per_session: -1\n",
			want: []string{"file.yaml:2: log.level:", "file.yaml:4: limits.max_calls_per_session:"}},
		{name: "every unknown key is reported", file: "a: 1\nlimits:\n  b: 2\n",
			want: []string{"file.yaml:1: a: unknown key", "file.yaml:3: limits.b: unknown key"}},
		{name: "YAML syntax error", file: "limits:\n  max_calls_per_session: [1,\n",
			want: []string{"file.yaml: yaml: line"}},
		{name: "tab indentation", file: "limits:\n\tmax_calls_per_session: 1\n",
			want: []string{"file.yaml: yaml: line"}},
		{name: "env value invalid", env: map[string]string{"TOOLWARDEN_LIMITS_MAX_CALLS_PER_SESSION": "-3"},
			want: []string{"env TOOLWARDEN_LIMITS_MAX_CALLS_PER_SESSION: limits.max_calls_per_session: must be greater than 0"}},
		{name: "env value invalid over a valid file", file: "limits:\n  max_calls_per_session: 7\n",
			env:  map[string]string{"TOOLWARDEN_LIMITS_MAX_CALLS_PER_SESSION": "0"},
			want: []string{"env TOOLWARDEN_LIMITS_MAX_CALLS_PER_SESSION: limits.max_calls_per_session"}},
		{name: "env wrong type", env: map[string]string{"TOOLWARDEN_LIMITS_MAX_CALLS_PER_SESSION": "many"},
			want: []string{"env TOOLWARDEN_LIMITS_MAX_CALLS_PER_SESSION: limits.max_calls_per_session:"}},
		{name: "env invalid duration", env: map[string]string{"TOOLWARDEN_LIMITS_CALL_TIMEOUT": "forever"},
			want: []string{"env TOOLWARDEN_LIMITS_CALL_TIMEOUT: limits.call_timeout:"}},
		{name: "env non-loopback addr", env: map[string]string{"TOOLWARDEN_HTTP_ADDR": "192.0.2.1:80"},
			want: []string{"env TOOLWARDEN_HTTP_ADDR: http.addr:", "not a loopback address"}},
		{name: "env bad log level", env: map[string]string{"TOOLWARDEN_LOG_LEVEL": "loud"},
			want: []string{"env TOOLWARDEN_LOG_LEVEL: log.level:"}},
		{name: "explicit config that does not exist", opts: Options{File: "nope.yaml"},
			want: []string{"config file nope.yaml:", "no such file"}},
		{name: "TOOLWARDEN_CONFIG that does not exist", env: map[string]string{"TOOLWARDEN_CONFIG": "gone.yaml"},
			want: []string{"config file gone.yaml:", "no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			if tt.file != "" {
				writeFile(t, "file.yaml", tt.file)
				tt.opts.File = "file.yaml"
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			l, err := Load(tt.opts)
			require.Error(t, err)
			require.Nil(t, l)
			for _, w := range tt.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestRemoteAddrAllowedExplicitly(t *testing.T) {
	tests := []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:8080", false, true},
		{"localhost:8080", false, true},
		{"LOCALHOST:8080", false, true},
		{"[::1]:8080", false, true},
		{"127.0.0.2:8080", false, true},
		{"0.0.0.0:8080", false, false},
		{":8080", false, false}, // every interface
		{"[::]:8080", false, false},
		{"192.0.2.1:8080", false, false},
		{"localhost.example.com:8080", false, false},
		{"0.0.0.0:8080", true, true},
		{":8080", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			isolate(t)
			t.Setenv("TOOLWARDEN_HTTP_ADDR", tt.addr)
			if tt.remote {
				t.Setenv("TOOLWARDEN_HTTP_ALLOW_REMOTE", "true")
			}
			l, err := Load(Options{})
			if !tt.ok {
				require.ErrorContains(t, err, "http.addr")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.addr, l.Config.HTTP.Addr)
			if tt.remote {
				require.Contains(t, l.Widenings, "http.allow_remote is true (from env TOOLWARDEN_HTTP_ALLOW_REMOTE)")
			}
		})
	}
}

func TestWorkspaceResolvesToAnAbsoluteDirectory(t *testing.T) {
	dir := isolate(t)
	require.NoError(t, os.Mkdir("ws", 0o700))
	writeFile(t, "file.yaml", "workspace: ws\n")
	l, err := Load(Options{File: "file.yaml"})
	require.NoError(t, err)
	sameDir(t, filepath.Join(dir, "ws"), l.Config.Workspace)
	require.True(t, filepath.IsAbs(l.Config.Workspace))
}

func TestEnvName(t *testing.T) {
	require.Equal(t, "TOOLWARDEN_LIMITS_MAX_CALLS_PER_SESSION", EnvName("limits.max_calls_per_session"))
	require.Equal(t, "TOOLWARDEN_WORKSPACE", EnvName("workspace"))
}

func TestEmptyFileIsTheDefault(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", "# nothing but a comment\n")
	l, err := Load(Options{File: "file.yaml"})
	require.NoError(t, err)
	require.ElementsMatch(t, defaultTools, l.Config.Policy.Allow)
}
