package configs

import (
	"time"
)

// Declared tool types and parameter types.
const (
	ToolCLI  = "cli"
	ToolHTTP = "http"

	ParamString   = "string"
	ParamInteger  = "integer"
	ParamBoolean  = "boolean"
	ParamFilepath = "filepath"
	ParamURL      = "url"
)

// DeclaredTool is a tool an operator declares in YAML, under `tools:` in
// the config file or in a tools.d/*.yaml file beside it. These types are
// the shape of the YAML; what a declaration means (its checks, argv
// templates and schema) is package tools/declared, which Load calls
// through Options.CheckTool.
type DeclaredTool struct {
	// Name is what the model calls, snake_case.
	Name        string `mapstructure:"name" yaml:"name"`
	Description string `mapstructure:"description" yaml:"description"`
	// Type is cli or http.
	Type string `mapstructure:"type" yaml:"type"`
	// RequiresApproval defaults to true; false is a widening.
	RequiresApproval *bool `mapstructure:"requires_approval" yaml:"requires_approval"`
	// Capabilities replace the default one (proc:exec:<program> for cli,
	// net:connect:<host:port> for http).
	Capabilities []string            `mapstructure:"capabilities" yaml:"capabilities"`
	Annotations  DeclaredAnnotations `mapstructure:"annotations" yaml:"annotations"`
	// Timeout of one call; 0 means exec.limits.timeout (cli) or 30s (http).
	Timeout time.Duration `mapstructure:"timeout" yaml:"timeout"`
	// MaxOutputBytes caps stdout/stderr (cli) or the response body (http);
	// 0 means exec.limits.output_bytes (cli) or 256 KiB (http).
	MaxOutputBytes int         `mapstructure:"max_output_bytes" yaml:"max_output_bytes"`
	Params         []ToolParam `mapstructure:"params" yaml:"params"`

	// Command (cli) is the argv template: each element a literal or holding
	// one {param} placeholder.
	Command []string `mapstructure:"command" yaml:"command"`
	// Path (cli) lists the directories a relative program is looked up in.
	Path []string `mapstructure:"path" yaml:"path"`
	// Env (cli) is fixed KEY=VALUE environment for the program.
	Env []string `mapstructure:"env" yaml:"env"`
	// GoCache (cli) runs the program with Go's environment and the
	// prepared, read-only GOCACHE of go scripts mounted, for go tools.
	GoCache bool `mapstructure:"go_cache" yaml:"go_cache"`
	// Network (cli) is the tool's egress allowlist; empty means none.
	Network Network `mapstructure:"network" yaml:"network"`
	// GoModules (cli, with go_cache) also mounts, read-only, a Go module
	// cache prepared on the host from the workspace's go.mod and go.sum
	// and verified against go.sum, so a module with dependencies builds
	// without network (tools/exec ModCache).
	GoModules bool `mapstructure:"go_modules" yaml:"go_modules"`

	// BaseURL and Method (http) are fixed; params go to the query or a
	// JSON body.
	BaseURL string `mapstructure:"base_url" yaml:"base_url"`
	Method  string `mapstructure:"method" yaml:"method"`
	// APIKeyEnv (http) names the environment variable holding an API key,
	// sent in APIKeyHeader (default Authorization, as "Bearer <key>");
	// APIKeyFile or APIKeyVault, when set, holds it instead (secrets.go).
	APIKeyEnv    string `mapstructure:"api_key_env" yaml:"api_key_env"`
	APIKeyFile   string `mapstructure:"api_key_file" yaml:"api_key_file"`
	APIKeyVault  string `mapstructure:"api_key_vault" yaml:"api_key_vault"`
	APIKeyHeader string `mapstructure:"api_key_header" yaml:"api_key_header"`
	// HeaderEnv (http) sends more headers whose values are secrets the
	// server reads.
	HeaderEnv []HeaderEnv `mapstructure:"header_env" yaml:"header_env"`
}

// APIKeySet reports whether the tool sends an API key.
func (t DeclaredTool) APIKeySet() bool { return t.APIKeyRef().Set() }

// HeaderEnv is one request header whose value the server reads from an
// environment variable (Env), a file (File) or Vault (Vault: exactly one);
// the model never sees it.
type HeaderEnv struct {
	Name  string `mapstructure:"name" yaml:"name"`
	Env   string `mapstructure:"env" yaml:"env"`
	File  string `mapstructure:"file" yaml:"file"`
	Vault string `mapstructure:"vault" yaml:"vault"`
}

// DeclaredAnnotations are the MCP hints of a declared tool. Unset, a tool
// is neither read-only nor idempotent; http tools are open-world.
type DeclaredAnnotations struct {
	Title       string `mapstructure:"title" yaml:"title"`
	ReadOnly    bool   `mapstructure:"read_only" yaml:"read_only"`
	Destructive bool   `mapstructure:"destructive" yaml:"destructive"`
	Idempotent  bool   `mapstructure:"idempotent" yaml:"idempotent"`
	OpenWorld   *bool  `mapstructure:"open_world" yaml:"open_world"`
}

// ToolParam is one typed parameter of a declared tool.
type ToolParam struct {
	Name        string `mapstructure:"name" yaml:"name"`
	Description string `mapstructure:"description" yaml:"description"`
	// Type is string, integer, boolean, filepath or url.
	Type     string `mapstructure:"type" yaml:"type"`
	Required bool   `mapstructure:"required" yaml:"required"`
	// Pattern (string) must match the whole value; MaxLength defaults to
	// declared.DefaultParamMaxLength; Enum lists the only values allowed.
	Pattern   string   `mapstructure:"pattern" yaml:"pattern"`
	MaxLength int      `mapstructure:"max_length" yaml:"max_length"`
	Enum      []string `mapstructure:"enum" yaml:"enum"`
	// Minimum and Maximum bound an integer.
	Minimum *int64 `mapstructure:"minimum" yaml:"minimum"`
	Maximum *int64 `mapstructure:"maximum" yaml:"maximum"`
	// Schemes (default https) and Hosts (required; "*.example.com" matches
	// subdomains) allowlist a url.
	Schemes []string `mapstructure:"schemes" yaml:"schemes"`
	Hosts   []string `mapstructure:"hosts" yaml:"hosts"`
	// AllowFlagLike lets a cli value start with "-" where it could be read
	// as a flag (before "--"); off by default.
	AllowFlagLike bool `mapstructure:"allow_flag_like" yaml:"allow_flag_like"`
	// In (http) is query or body; default query for GET and DELETE, body
	// otherwise.
	In string `mapstructure:"in" yaml:"in"`
}

// ApprovalRequired reports whether calls need human approval (default yes).
func (t DeclaredTool) ApprovalRequired() bool {
	return t.RequiresApproval == nil || *t.RequiresApproval
}

// ParamIn is where an http parameter goes: query or body.
func (t DeclaredTool) ParamIn(p ToolParam) string {
	if p.In != "" {
		return p.In
	}
	if t.Method == "GET" || t.Method == "DELETE" || t.Method == "" {
		return "query"
	}
	return "body"
}
