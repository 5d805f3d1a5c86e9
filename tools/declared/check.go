package declared

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/lazyregexp"
)

// ReservedToolNames are the built-in tools' names; a declared tool may not
// take one (it would shadow the built-in, and inherit its allow rule).
// `go generate ./mcpserver` rewrites it from mcpserver.Catalog, and
// mcpserver's tests check it holds exactly the catalog's names.
var ReservedToolNames = []string{
	"read_file", "read_multiple_files", "list_directory", "directory_tree", "search_files", "grep_files",
	"file_info", "write_file", "edit_file", "create_directory", "move_file", "delete_file",
	"git_status", "git_diff", "git_log", "git_show", "git_add", "git_commit",
	"run_script", "run_command",
	"retrieve_artifact", "list_artifacts", "store_artifact",
	"list_missions", "get_mission", "get_task", "list_child_tasks", "check_task_dependencies",
	"create_mission", "create_task", "update_task_status", "add_child_task", "add_task_dependency",
	"assign_agent_to_task", "link_artifact_to_task",
}

var (
	toolName   = lazyregexp.New(`^[a-z][a-z0-9_]{2,63}$`)
	paramName  = lazyregexp.New(`^[a-z][a-z0-9_]{0,63}$`)
	headerName = lazyregexp.New(`^[A-Za-z0-9-]{1,64}$`)
	envEntry   = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*=`)
	hostGlob   = lazyregexp.New(`^(\*\.)?[a-z0-9]([a-z0-9.-]*[a-z0-9])?$`)
)

// maxToolTimeout bounds a declared tool's timeout.
const maxToolTimeout = time.Hour

// DefaultParamMaxLength caps a string parameter that sets no max_length.
const DefaultParamMaxLength = 4096

// MaxURLLength caps a url parameter.
const MaxURLLength = 2048

// DefaultCLIPath is where a cli tool's program is looked up when it is not
// an absolute path and the tool sets no path. The sandbox sees only /usr
// (and the merged-/usr links), so only programs there can run.
var DefaultCLIPath = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin"}

// Check validates one declared tool and completes it (a cli program found
// on its path becomes absolute, an http method is upper-cased). Keys passed
// to add are relative to the tool; configs.Load calls it through
// Options.CheckTool and reports each problem as "file:line: tools[i].key:
// reason".
func Check(t *configs.DeclaredTool, add func(key, format string, args ...any)) {
	if !toolName.MatchString(t.Name) {
		add("name", "%q must be snake_case: a lowercase letter, then 2 to 63 lowercase letters, digits or _", t.Name)
	} else if slices.Contains(ReservedToolNames, t.Name) {
		add("name", "%q is a built-in tool's name; choose another", t.Name)
	}
	if strings.TrimSpace(t.Description) == "" {
		add("description", "is empty; the model needs it to know when to call the tool")
	}
	if t.Timeout < 0 || t.Timeout > maxToolTimeout {
		add("timeout", "must be between 0 and %s, got %s", maxToolTimeout, t.Timeout)
	}
	if t.MaxOutputBytes < 0 {
		add("max_output_bytes", "must not be negative")
	}
	if t.Annotations.ReadOnly && t.Annotations.Destructive {
		add("annotations", "a read-only tool cannot be destructive")
	}
	for i, c := range t.Capabilities {
		if strings.Count(c, ":") < 2 {
			add(fmt.Sprintf("capabilities[%d]", i), "%q is not resource:verb:scope", c)
		}
	}
	seen := map[string]bool{}
	for i, p := range t.Params {
		key := fmt.Sprintf("params[%d]", i)
		if seen[p.Name] {
			add(key+".name", "%q is declared twice", p.Name)
		}
		seen[p.Name] = true
		checkParam(p, add, key)
	}
	switch t.Type {
	case configs.ToolCLI:
		checkCLI(t, add)
	case configs.ToolHTTP:
		checkHTTP(t, add)
	case "api":
		add("type", `"api" is called "http" here; use cli or http`)
	default:
		add("type", "%q is not a tool type; use cli or http", t.Type)
	}
}

func checkParam(p configs.ToolParam, add func(string, string, ...any), key string) {
	if !paramName.MatchString(p.Name) {
		add(key+".name", "%q must be snake_case (lowercase letters, digits, _)", p.Name)
	}
	notFor := func(field string, set bool, types ...string) {
		if set && !slices.Contains(types, p.Type) {
			add(key+"."+field, "applies only to %s params, not %q", strings.Join(types, " and "), p.Type)
		}
	}
	notFor("pattern", p.Pattern != "", configs.ParamString)
	notFor("enum", len(p.Enum) > 0, configs.ParamString)
	notFor("max_length", p.MaxLength != 0, configs.ParamString)
	notFor("minimum", p.Minimum != nil, configs.ParamInteger)
	notFor("maximum", p.Maximum != nil, configs.ParamInteger)
	notFor("schemes", len(p.Schemes) > 0, configs.ParamURL)
	notFor("hosts", len(p.Hosts) > 0, configs.ParamURL)
	switch p.Type {
	case configs.ParamString:
		if p.Pattern != "" {
			if _, err := regexp.Compile(p.Pattern); err != nil {
				add(key+".pattern", "is not a regular expression: %v", err)
			}
		}
		if p.MaxLength < 0 {
			add(key+".max_length", "must not be negative")
		}
	case configs.ParamInteger:
		if p.Minimum != nil && p.Maximum != nil && *p.Minimum > *p.Maximum {
			add(key+".minimum", "%d is more than maximum %d", *p.Minimum, *p.Maximum)
		}
	case configs.ParamURL:
		checkURL(p, add, key)
	case configs.ParamBoolean, configs.ParamFilepath:
	default:
		add(key+".type", "%q is not a param type; use string, integer, boolean, filepath or url", p.Type)
	}
	if p.In != "" && p.In != "query" && p.In != "body" {
		add(key+".in", "%q is neither query nor body", p.In)
	}
}

func checkURL(p configs.ToolParam, add func(string, string, ...any), key string) {
	if len(p.Hosts) == 0 {
		add(key+".hosts", "a url param needs a host allowlist")
	}
	for _, h := range p.Hosts {
		if !hostGlob.MatchString(h) {
			add(key+".hosts", "%q is not a lowercase host name, optionally starting with *.", h)
		}
	}
	for _, s := range p.Schemes {
		if s != "https" && s != "http" {
			add(key+".schemes", "%q is not http or https", s)
		}
	}
}

func checkCLI(t *configs.DeclaredTool, add func(string, string, ...any)) {
	for _, f := range []struct {
		key string
		set bool
	}{{"base_url", t.BaseURL != ""}, {"method", t.Method != ""}, {"api_key_env", t.APIKeyEnv != ""},
		{"api_key_file", t.APIKeyFile != ""}, {"api_key_vault", t.APIKeyVault != ""},
		{"api_key_header", t.APIKeyHeader != ""}, {"header_env", len(t.HeaderEnv) > 0}} {
		if f.set {
			add(f.key, "applies only to http tools")
		}
	}
	if t.GoModules && !t.GoCache {
		add("go_modules", "needs go_cache: true")
	}
	for i, e := range t.Env {
		if !envEntry.MatchString(e) {
			add(fmt.Sprintf("env[%d]", i), "must be KEY=VALUE")
		}
	}
	if len(t.Command) == 0 {
		add("command", "is empty; give the program and its arguments, e.g. [grep, -n, --, \"{query}\", \"{file}\"]")
		return
	}
	if a, err := ParseArg(t.Command[0]); err == nil && a.Literal() {
		resolveProgram(t, add)
	}
	used := checkTemplate(t, add)
	for i, p := range t.Params {
		if !used[p.Name] {
			add(fmt.Sprintf("params[%d].name", i), "%q is never used in command; every param must appear as {%s}", p.Name, p.Name)
		}
		if p.In != "" {
			add(fmt.Sprintf("params[%d].in", i), "applies only to http tools")
		}
	}
}

// checkTemplate checks the argv template and returns the params it uses.
func checkTemplate(t *configs.DeclaredTool, add func(string, string, ...any)) map[string]bool {
	used := map[string]bool{}
	afterDashes := false
	for i, elem := range t.Command {
		key := fmt.Sprintf("command[%d]", i)
		a, err := ParseArg(elem)
		if err != nil {
			add(key, "%v", err)
			continue
		}
		if i == 0 && !a.Literal() {
			add(key, "the program must be fixed, not a placeholder")
			continue
		}
		if a.Literal() {
			afterDashes = afterDashes || elem == "--"
			continue
		}
		p, ok := findParam(t, a.Param)
		if !ok {
			add(key, "placeholder {%s} names no param; declare it under params", a.Param)
			continue
		}
		used[p.Name] = true
		if strings.Trim(a.Prefix, "-") == "" && a.Prefix != "" {
			add(key, "%q lets the model choose a flag's name; fix the flag and put the value after it, e.g. --name={%s}", elem, a.Param)
		} else if strings.HasPrefix(a.Prefix, "-") && !strings.HasSuffix(a.Prefix, "=") {
			add(key, "%q glues the value to a flag without '=', where it could be read as more short flags (-n{x} with x=rf is -n -r -f); write --name={%s}, or the flag and {%s} as two elements", elem, a.Param, a.Param)
		}
		// Any element of an optional param is dropped when it is absent, a
		// "name_{p}" as much as a "{p}"; only a "--flag={p}" takes its flag
		// along.
		if !strings.HasPrefix(elem, "-") && !p.Required && !afterDashes && i > 0 && strings.HasPrefix(t.Command[i-1], "-") {
			add(key, "optional param %q stands alone after the flag %q: when it is absent the element is dropped and the flag would take the next argument; write %s={%s} or make it required",
				p.Name, t.Command[i-1], t.Command[i-1], p.Name)
		}
	}
	return used
}

// resolveProgram makes command[0] absolute, looking it up on the tool's
// path, and checks the sandbox can see it.
func resolveProgram(t *configs.DeclaredTool, add func(string, string, ...any)) {
	prog := t.Command[0]
	dirs := t.Path
	if len(dirs) == 0 {
		dirs = DefaultCLIPath
	}
	for i, d := range t.Path {
		if !filepath.IsAbs(d) {
			add(fmt.Sprintf("path[%d]", i), "%q is not an absolute directory", d)
		}
	}
	if !filepath.IsAbs(prog) {
		if strings.Contains(prog, "/") {
			add("command[0]", "%q must be an absolute path or a bare program name looked up on path", prog)
			return
		}
		found := ""
		for _, d := range dirs {
			if isExecutable(filepath.Join(d, prog)) {
				found = filepath.Join(d, prog)
				break
			}
		}
		if found == "" {
			add("command[0]", "program %q is not found on path %v", prog, dirs)
			return
		}
		t.Command[0], prog = found, found
	}
	prog = path.Clean(prog)
	if !strings.HasPrefix(prog, "/usr/") && !strings.HasPrefix(prog, "/bin/") && !strings.HasPrefix(prog, "/sbin/") {
		add("command[0]", "%q is outside /usr, /bin and /sbin, which are all the sandbox can see", prog)
	} else if !isExecutable(prog) {
		add("command[0]", "%q is not an executable file", prog)
	}
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

func checkHTTP(t *configs.DeclaredTool, add func(string, string, ...any)) {
	for _, f := range []struct {
		key string
		set bool
	}{{"command", len(t.Command) > 0}, {"path", len(t.Path) > 0}, {"env", len(t.Env) > 0}, {"go_cache", t.GoCache}, {"go_modules", t.GoModules}} {
		if f.set {
			add(f.key, "applies only to cli tools")
		}
	}
	if t.Method == "" {
		t.Method = http.MethodGet
	}
	t.Method = strings.ToUpper(t.Method)
	if !slices.Contains([]string{"GET", "POST", "PUT", "PATCH", "DELETE"}, t.Method) {
		add("method", "%q is not one of GET, POST, PUT, PATCH, DELETE", t.Method)
	}
	if err := checkBaseURL(t.BaseURL); err != nil {
		add("base_url", "%v", err)
	}
	checkSecrets(t, add)
	for i, p := range t.Params {
		key := fmt.Sprintf("params[%d]", i)
		if p.Type == configs.ParamFilepath {
			add(key+".type", "filepath params are for cli tools; an http tool cannot read the workspace")
		}
		if p.AllowFlagLike {
			add(key+".allow_flag_like", "applies only to cli tools")
		}
		if u, err := url.Parse(t.BaseURL); err == nil && t.ParamIn(p) == "query" && u.Query().Has(p.Name) {
			add(key+".name", "%q is already fixed in base_url's query; the model may not replace it", p.Name)
		}
		if t.ParamIn(p) == "body" && (t.Method == "GET" || t.Method == "DELETE") {
			add(key+".in", "a %s request has no body; use in: query", t.Method)
		}
	}
}

func checkSecrets(t *configs.DeclaredTool, add func(string, string, ...any)) {
	if t.APIKeyEnv != "" && !configs.IsEnvVarName(t.APIKeyEnv) {
		// The value is not echoed: it may be the key itself.
		add("api_key_env", "is not an environment variable name; name the variable that holds the key, never the key itself")
	}
	if t.APIKeyHeader != "" && (!t.APIKeySet() || !headerName.MatchString(t.APIKeyHeader)) {
		add("api_key_header", "must be a header name, and needs api_key_env, api_key_file or api_key_vault")
	}
	configs.CheckSecretRef(add, t.APIKeyRef())
	for i, h := range t.HeaderEnv {
		key := fmt.Sprintf("header_env[%d]", i)
		if !headerName.MatchString(h.Name) {
			add(key+".name", "%q is not a header name", h.Name)
		}
		if h.File == "" && h.Vault == "" && !configs.IsEnvVarName(h.Env) {
			add(key+".env", "is not an environment variable name; name the variable that holds the value, never the value itself")
		}
		configs.CheckSecretRef(add, h.Ref(i))
	}
}

// checkBaseURL checks an http tool's fixed URL: absolute, http(s), a host,
// no credentials or fragment, and plain http only to a loopback host (a
// secret header would otherwise cross the network in clear text).
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return fmt.Errorf("is empty; give the endpoint, e.g. https://api.example.com/v1/search")
	case err != nil:
		return fmt.Errorf("is not a URL: %v", err)
	case u.Scheme != "https" && u.Scheme != "http":
		return fmt.Errorf("%q must start with https://", raw)
	case u.Hostname() == "":
		return fmt.Errorf("%q has no host", raw)
	case u.User != nil:
		return fmt.Errorf("must not hold credentials; use api_key_env or header_env")
	case u.Fragment != "":
		return fmt.Errorf("%q must not have a #fragment", raw)
	case u.Scheme == "http" && !configs.IsLoopback(u.Hostname()):
		return fmt.Errorf("%q uses plain http to a non-loopback host; use https", raw)
	}
	return nil
}

func findParam(t *configs.DeclaredTool, name string) (configs.ToolParam, bool) {
	for _, p := range t.Params {
		if p.Name == name {
			return p, true
		}
	}
	return configs.ToolParam{}, false
}
