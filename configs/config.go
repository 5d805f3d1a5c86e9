// Package configs holds toolwarden's configuration: the types, the default
// embedded in the binary, the loader (file, environment, flags) and its
// validation.
package configs

import (
	_ "embed"
	"time"
)

//go:embed default.yaml
var defaultYAML []byte

// DefaultYAML returns the embedded default configuration.
func DefaultYAML() []byte { return append([]byte(nil), defaultYAML...) }

// Config is the whole configuration. Field tags name the YAML keys.
type Config struct {
	Workspace string `mapstructure:"workspace" yaml:"workspace"`
	Policy    Policy `mapstructure:"policy" yaml:"policy"`
	Limits    Limits `mapstructure:"limits" yaml:"limits"`
	FS        FS     `mapstructure:"fs" yaml:"fs"`
	Audit     Audit  `mapstructure:"audit" yaml:"audit"`
	HTTP      HTTP   `mapstructure:"http" yaml:"http"`
	Graph     Graph  `mapstructure:"graph" yaml:"graph"`
	Log       Log    `mapstructure:"log" yaml:"log"`
}

// Policy lists tool-name globs; deny wins over allow.
type Policy struct {
	Allow []string `mapstructure:"allow" yaml:"allow"`
	Deny  []string `mapstructure:"deny" yaml:"deny"`
}

// Limits bound each session and each call.
type Limits struct {
	MaxCallsPerSession       int           `mapstructure:"max_calls_per_session" yaml:"max_calls_per_session"`
	MaxOutputBytesPerSession int64         `mapstructure:"max_output_bytes_per_session" yaml:"max_output_bytes_per_session"`
	MaxOutputBytesPerCall    int           `mapstructure:"max_output_bytes_per_call" yaml:"max_output_bytes_per_call"`
	CallTimeout              time.Duration `mapstructure:"call_timeout" yaml:"call_timeout"`
}

// FS bounds the file tools.
type FS struct {
	MaxReadBytes     int64 `mapstructure:"max_read_bytes" yaml:"max_read_bytes"`
	MaxFilesPerRead  int   `mapstructure:"max_files_per_read" yaml:"max_files_per_read"`
	MaxWriteBytes    int64 `mapstructure:"max_write_bytes" yaml:"max_write_bytes"`
	MaxTreeDepth     int   `mapstructure:"max_tree_depth" yaml:"max_tree_depth"`
	MaxTreeEntries   int   `mapstructure:"max_tree_entries" yaml:"max_tree_entries"`
	MaxSearchResults int   `mapstructure:"max_search_results" yaml:"max_search_results"`
	MaxGrepMatches   int   `mapstructure:"max_grep_matches" yaml:"max_grep_matches"`
	MaxGrepFileBytes int64 `mapstructure:"max_grep_file_bytes" yaml:"max_grep_file_bytes"`
}

// Audit configures the hash-chained audit log.
type Audit struct {
	Path string `mapstructure:"path" yaml:"path"`
}

// HTTP configures the streamable HTTP and SSE transports.
type HTTP struct {
	Addr               string        `mapstructure:"addr" yaml:"addr"`
	TokenFile          string        `mapstructure:"token_file" yaml:"token_file"`
	AllowRemote        bool          `mapstructure:"allow_remote" yaml:"allow_remote"`
	AllowedHosts       []string      `mapstructure:"allowed_hosts" yaml:"allowed_hosts"`
	AllowedOrigins     []string      `mapstructure:"allowed_origins" yaml:"allowed_origins"`
	MaxBodyBytes       int64         `mapstructure:"max_body_bytes" yaml:"max_body_bytes"`
	MaxSessions        int           `mapstructure:"max_sessions" yaml:"max_sessions"`
	SessionIdleTimeout time.Duration `mapstructure:"session_idle_timeout" yaml:"session_idle_timeout"`
}

// Graph configures the Neo4j task-graph tools. An empty URI leaves the
// graph toolset unavailable. Passwords are never values here: the *_env
// keys name the environment variables that hold them.
type Graph struct {
	URI         string `mapstructure:"uri" yaml:"uri"`
	Username    string `mapstructure:"username" yaml:"username"`
	PasswordEnv string `mapstructure:"password_env" yaml:"password_env"`
	Database    string `mapstructure:"database" yaml:"database"`
	// ReadUsername and ReadPasswordEnv, when set, are the credentials of
	// the read-only tools; otherwise they use Username.
	ReadUsername    string `mapstructure:"read_username" yaml:"read_username"`
	ReadPasswordEnv string `mapstructure:"read_password_env" yaml:"read_password_env"`
	// ConnectTimeout bounds connecting and acquiring a pooled connection.
	ConnectTimeout time.Duration `mapstructure:"connect_timeout" yaml:"connect_timeout"`
	// QueryTimeout is the server-side timeout of each transaction.
	QueryTimeout time.Duration `mapstructure:"query_timeout" yaml:"query_timeout"`
	// MaxRetryTime bounds the driver's retries of transient errors.
	MaxRetryTime   time.Duration `mapstructure:"max_retry_time" yaml:"max_retry_time"`
	MaxConnections int           `mapstructure:"max_connections" yaml:"max_connections"`
	// MaxListResults caps the IDs and tasks one call returns.
	MaxListResults int `mapstructure:"max_list_results" yaml:"max_list_results"`
}

// Log configures the stderr logger.
type Log struct {
	Level string `mapstructure:"level" yaml:"level"`
}
