// Package configs holds toolwarden's configuration: the types, the default
// embedded in the binary, the loader (file, environment, flags) and its
// validation.
package configs

import (
	_ "embed"
	"strings"
	"time"
)

//go:embed default.yaml
var defaultYAML []byte

// DefaultYAML returns the embedded default configuration.
func DefaultYAML() []byte { return append([]byte(nil), defaultYAML...) }

// Config is the whole configuration. Field tags name the YAML keys.
type Config struct {
	Capabilities Capabilities `mapstructure:"capabilities" yaml:"capabilities"`

	Workspace string    `mapstructure:"workspace" yaml:"workspace"`
	Policy    Policy    `mapstructure:"policy" yaml:"policy"`
	Limits    Limits    `mapstructure:"limits" yaml:"limits"`
	FS        FS        `mapstructure:"fs" yaml:"fs"`
	Approval  Approval  `mapstructure:"approval" yaml:"approval"`
	Audit     Audit     `mapstructure:"audit" yaml:"audit"`
	HTTP      HTTP      `mapstructure:"http" yaml:"http"`
	Exec      Exec      `mapstructure:"exec" yaml:"exec"`
	Log       Log       `mapstructure:"log" yaml:"log"`
	Artifacts Artifacts `mapstructure:"artifacts" yaml:"artifacts"`
	Graph     Graph     `mapstructure:"graph" yaml:"graph"`
	Metrics   Metrics   `mapstructure:"metrics" yaml:"metrics"`
	// Cluster is the state replicas share (cluster.go).
	Cluster Cluster `mapstructure:"cluster" yaml:"cluster"`
	// Tasks bounds the calls run as MCP tasks (tasks.go).
	Tasks Tasks `mapstructure:"tasks" yaml:"tasks"`
	// Tools are the operator's declared tools (see declared.go); more come
	// from tools.d/*.yaml beside the config file.
	Tools        []DeclaredTool `mapstructure:"tools" yaml:"tools"`
	OutputFilter OutputFilter   `mapstructure:"output_filter" yaml:"output_filter"`
	// Secrets are where secrets come from besides the environment: a
	// .env file and a Vault/OpenBao server (secrets.go).
	Secrets Secrets `mapstructure:"secrets" yaml:"secrets"`
	// Arguments is what is done with secrets and injection markers found
	// in a call's free-text arguments (arguments.go).
	Arguments Arguments `mapstructure:"arguments" yaml:"arguments"`
	// Identities are extra, narrowing policy layers per caller.
	Identities []IdentityRule `mapstructure:"identities" yaml:"identities"`
	// Upstreams are other MCP servers whose tools are offered behind the
	// guard (upstream.go); more come from upstreams.d/*.yaml.
	Upstreams []Upstream `mapstructure:"upstreams" yaml:"upstreams"`
	// UpstreamPins is what a changed upstream tool definition meets
	// (upstream.go): block, warn or trust_on_first_use; "" picks block
	// when a pins file is beside the config file, else
	// trust_on_first_use.
	UpstreamPins string `mapstructure:"upstream_pins" yaml:"upstream_pins"`
	// Bridge is what `toolwarden gemini` may spend (bridge.go).
	Bridge Bridge `mapstructure:"bridge" yaml:"bridge"`

	// File is the config file this was read from ("" for none), set by
	// Load: the server keeps its tools from writing it.
	File string `mapstructure:"-" yaml:"-" json:"-"`
}

// Policy lists tool-name globs; deny wins over allow.
type Policy struct {
	Allow []string `mapstructure:"allow" yaml:"allow"`
	Deny  []string `mapstructure:"deny" yaml:"deny"`
	// RequireTrust marks more tools requires_trust: they run only from
	// `toolwarden call --trusted`, never for a model.
	RequireTrust []string `mapstructure:"require_trust" yaml:"require_trust"`
	// ClientControlArgs are argument names clients add to every tool
	// call for themselves (Gemini CLI's wait_for_previous). They are
	// dropped before the strict schema check, unless the tool's own
	// schema defines them, and the audit line names them.
	ClientControlArgs []string `mapstructure:"client_control_args" yaml:"client_control_args"`
	// Taint is what a call that sends out meets in a session whose results
	// held secrets, or whose calls named a credential's variable, an
	// autostart location or a script it wrote: approve, refuse or off
	// (guard/taint.go, guard/chain.go).
	Taint string `mapstructure:"taint" yaml:"taint"`
	// PrivateTools are tool-name globs of tools that read private data
	// (mail, tickets, private repositories): a call to one taints its
	// session under Taint.
	PrivateTools []string `mapstructure:"private_tools" yaml:"private_tools"`
}

// Limits bound each session and each call.
type Limits struct {
	MaxCallsPerSession       int           `mapstructure:"max_calls_per_session" yaml:"max_calls_per_session"`
	MaxOutputBytesPerSession int64         `mapstructure:"max_output_bytes_per_session" yaml:"max_output_bytes_per_session"`
	MaxOutputBytesPerCall    int           `mapstructure:"max_output_bytes_per_call" yaml:"max_output_bytes_per_call"`
	CallTimeout              time.Duration `mapstructure:"call_timeout" yaml:"call_timeout"`
	// TimeoutGrace is how long a call past its deadline is still waited
	// for, so that its audit line says how it truly ended (completed_late)
	// or that it was left running (abandoned).
	TimeoutGrace time.Duration `mapstructure:"timeout_grace" yaml:"timeout_grace"`
	// MaxAbandoned is how many abandoned calls of one identity may still
	// run before its new calls are denied (limit.abandoned).
	MaxAbandoned int `mapstructure:"max_abandoned" yaml:"max_abandoned"`
	// Window is what the counted limits (the *_per_session ones, budget,
	// and limits.tools' max_calls and bytes) are counted over, per
	// identity: a window starts at the identity's first call, and its
	// counts start again when it ends. The stateless protocol has no
	// session, so "per session" alone would mean "for ever".
	Window time.Duration `mapstructure:"window" yaml:"window"`

	// Optional bounds per identity (0 is off), and per tool by name glob.
	RatePerMinute        float64               `mapstructure:"rate_per_minute" yaml:"rate_per_minute"`
	Burst                int                   `mapstructure:"burst" yaml:"burst"`
	MaxBytesInPerSession int64                 `mapstructure:"max_bytes_in_per_session" yaml:"max_bytes_in_per_session"`
	Budget               int64                 `mapstructure:"budget" yaml:"budget"`
	Tools                map[string]ToolLimits `mapstructure:"tools" yaml:"tools"`
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

// Audit configures the hash-chained audit log (see audit.go).
type Audit struct {
	Path string `mapstructure:"path" yaml:"path"`
	// Sync is when lines are fsynced: always, interval or none.
	Sync string `mapstructure:"sync" yaml:"sync"`
	// MaxBytes and MaxAge rotate the file (0 is off); Keep is how many
	// rotated files are kept (0 keeps all).
	MaxBytes int64         `mapstructure:"max_bytes" yaml:"max_bytes"`
	MaxAge   time.Duration `mapstructure:"max_age" yaml:"max_age"`
	Keep     int           `mapstructure:"keep" yaml:"keep"`
	// ReplicaID, Ship and Anchor: see configs/audit.go.
	ReplicaID string      `mapstructure:"replica_id" yaml:"replica_id"`
	Ship      AuditShip   `mapstructure:"ship" yaml:"ship"`
	Anchor    AuditAnchor `mapstructure:"anchor" yaml:"anchor"`
	// SigningKeyFile and CheckpointEvery: signed checkpoints, see
	// configs/audit.go.
	SigningKeyFile  string               `mapstructure:"signing_key_file" yaml:"signing_key_file"`
	CheckpointEvery AuditCheckpointEvery `mapstructure:"checkpoint_every" yaml:"checkpoint_every"`
}

// HTTP configures the streamable HTTP and SSE transports.
type HTTP struct {
	// SecretSources is where the tokens come from (bound by Load).
	SecretSources `mapstructure:"-" yaml:"-" json:"-"`
	Addr          string `mapstructure:"addr" yaml:"addr"`
	// TokenFile or TokenVault holds the bearer token when
	// TOOLWARDEN_HTTP_TOKEN does not (secrets.go).
	TokenFile          string        `mapstructure:"token_file" yaml:"token_file"`
	TokenVault         string        `mapstructure:"token_vault" yaml:"token_vault"`
	AllowRemote        bool          `mapstructure:"allow_remote" yaml:"allow_remote"`
	AllowedHosts       []string      `mapstructure:"allowed_hosts" yaml:"allowed_hosts"`
	AllowedOrigins     []string      `mapstructure:"allowed_origins" yaml:"allowed_origins"`
	MaxBodyBytes       int64         `mapstructure:"max_body_bytes" yaml:"max_body_bytes"`
	MaxSessions        int           `mapstructure:"max_sessions" yaml:"max_sessions"`
	SessionIdleTimeout time.Duration `mapstructure:"session_idle_timeout" yaml:"session_idle_timeout"`
	// MaxStreamsPerIdentity bounds the event streams (GET /mcp, GET /sse)
	// one identity holds open at once.
	MaxStreamsPerIdentity int `mapstructure:"max_streams_per_identity" yaml:"max_streams_per_identity"`
	// Identities are more bearer tokens, each named: limits are counted
	// per identity, and the audit log shows the name.
	Identities []HTTPIdentity `mapstructure:"identities" yaml:"identities"`
	// PublicURL is the server's URL as clients reach it (scheme and host,
	// e.g. https://tools.example.com), behind any proxy: the OAuth
	// resource identifier and metadata URL are built from it.
	PublicURL string `mapstructure:"public_url" yaml:"public_url"`
	// OAuth, when its issuer is set, makes the server an OAuth 2.1
	// resource server accepting that provider's access tokens.
	OAuth OAuth `mapstructure:"oauth" yaml:"oauth"`
}

// OAuth configures access-token validation (see docs/oauth.md).
type OAuth struct {
	// Issuer is the identity provider's issuer URL, as its tokens' iss.
	Issuer string `mapstructure:"issuer" yaml:"issuer"`
	// Audience is this server's resource identifier, which a token's aud
	// must contain; empty means public_url + "/mcp".
	Audience string `mapstructure:"audience" yaml:"audience"`
	// Scopes must all be granted to every token.
	Scopes []string `mapstructure:"scopes" yaml:"scopes"`
	// Algorithms accepted; empty means every asymmetric one
	// (RS*, PS*, ES*, EdDSA). none and HMAC never are.
	Algorithms []string `mapstructure:"algorithms" yaml:"algorithms"`
	// ClockSkew is how far exp and nbf may be off.
	ClockSkew time.Duration `mapstructure:"clock_skew" yaml:"clock_skew"`
	// Introspection validates opaque access tokens (RFC 7662).
	Introspection Introspection `mapstructure:"introspection" yaml:"introspection"`
}

// Introspection configures RFC 7662 token introspection. The client
// secret is never a value here: ClientSecretEnv names the variable.
type Introspection struct {
	// SecretSources is where the section's secrets come from (bound by Load).
	SecretSources `mapstructure:"-" yaml:"-" json:"-"`
	Enabled       bool `mapstructure:"enabled" yaml:"enabled"`
	// Endpoint; empty means the issuer metadata's introspection_endpoint.
	Endpoint        string `mapstructure:"endpoint" yaml:"endpoint"`
	ClientID        string `mapstructure:"client_id" yaml:"client_id"`
	ClientSecretEnv string `mapstructure:"client_secret_env" yaml:"client_secret_env"`
	// ClientSecretFile and ClientSecretVault are the other places the
	// secret may come from (secrets.go).
	ClientSecretFile  string `mapstructure:"client_secret_file" yaml:"client_secret_file"`
	ClientSecretVault string `mapstructure:"client_secret_vault" yaml:"client_secret_vault"`
}

// Enabled reports whether OAuth tokens are accepted.
func (o OAuth) Enabled() bool { return o.Issuer != "" }

// ResourceURL is the audience tokens must name: oauth.audience, or the
// public URL's /mcp.
func (h HTTP) ResourceURL() string {
	if h.OAuth.Audience != "" {
		return h.OAuth.Audience
	}
	if h.PublicURL == "" {
		return ""
	}
	return strings.TrimSuffix(h.PublicURL, "/") + "/mcp"
}

// HTTPIdentity is one named HTTP client. Its token is never a value here:
// TokenEnv names the environment variable holding it, TokenFile the file
// or TokenVault the Vault secret (exactly one).
type HTTPIdentity struct {
	Name       string `mapstructure:"name" yaml:"name"`
	TokenEnv   string `mapstructure:"token_env" yaml:"token_env"`
	TokenFile  string `mapstructure:"token_file" yaml:"token_file"`
	TokenVault string `mapstructure:"token_vault" yaml:"token_vault"`
}

// Graph configures the Neo4j task-graph tools. An empty URI leaves the
// graph toolset unavailable. Passwords are never values here: the *_env
// keys name the environment variables that hold them.
type Graph struct {
	// SecretSources is where the section's secrets come from (bound by Load).
	SecretSources `mapstructure:"-" yaml:"-" json:"-"`
	URI           string `mapstructure:"uri" yaml:"uri"`
	Username      string `mapstructure:"username" yaml:"username"`
	PasswordEnv   string `mapstructure:"password_env" yaml:"password_env"`
	// PasswordFile and PasswordVault are the other places the password
	// may come from (secrets.go); the read_* ones likewise.
	PasswordFile  string `mapstructure:"password_file" yaml:"password_file"`
	PasswordVault string `mapstructure:"password_vault" yaml:"password_vault"`
	Database      string `mapstructure:"database" yaml:"database"`
	// ReadUsername and ReadPasswordEnv, when set, are the credentials of
	// the read-only tools; otherwise they use Username.
	ReadUsername      string `mapstructure:"read_username" yaml:"read_username"`
	ReadPasswordEnv   string `mapstructure:"read_password_env" yaml:"read_password_env"`
	ReadPasswordFile  string `mapstructure:"read_password_file" yaml:"read_password_file"`
	ReadPasswordVault string `mapstructure:"read_password_vault" yaml:"read_password_vault"`
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

// Exec configures the sandboxed execution tools, run_script and
// run_command.
type Exec struct {
	// Backend is auto (gVisor runsc, else bubblewrap), runsc or bwrap.
	Backend   string `mapstructure:"backend" yaml:"backend"`
	RunscPath string `mapstructure:"runsc_path" yaml:"runsc_path"`
	BwrapPath string `mapstructure:"bwrap_path" yaml:"bwrap_path"`
	// StateDir holds the runtimes' state; empty means under the XDG state dir.
	StateDir string `mapstructure:"state_dir" yaml:"state_dir"`
	// GoCache is the prepared, read-only GOCACHE for go scripts; empty
	// means under the XDG cache dir.
	GoCache string `mapstructure:"go_cache" yaml:"go_cache"`
	// Interpreters enables a subset of python, bash and go for run_script.
	Interpreters []string `mapstructure:"interpreters" yaml:"interpreters"`
	// WorkspaceWritable mounts the workspace read-write (a widening).
	WorkspaceWritable bool `mapstructure:"workspace_writable" yaml:"workspace_writable"`
	// WarmPool is how many gVisor sandboxes are kept booted ahead, each
	// for one run (0: none).
	WarmPool int `mapstructure:"warm_pool" yaml:"warm_pool"`
	// WarmPoolIdle is how long the pool stays booted without a run or a
	// client being offered the exec tools; it is emptied after.
	WarmPoolIdle time.Duration `mapstructure:"warm_pool_idle" yaml:"warm_pool_idle"`
	// OneShot is set by the commands that build the server for one call
	// or none (call, config check, tools, policy explain): they boot no
	// sandbox ahead, which would cost CPU for runs that never come.
	OneShot bool       `mapstructure:"-" yaml:"-"`
	Limits  ExecLimits `mapstructure:"limits" yaml:"limits"`
	// AcceptWeakerLimits names the limits (memory, pids, cpu) the operator
	// set and accepts the sandbox enforcing less strictly than configured
	// in its mode (rootless: per process, or not at all); a widening.
	AcceptWeakerLimits []string `mapstructure:"accept_weaker_limits" yaml:"accept_weaker_limits"`
	// LimitsSet names the limits among memory, pids and cpu whose value
	// the operator set (in a file, the environment or a flag); Load fills
	// it. A limit set and not enforceable as configured is a start-up
	// error unless accepted.
	LimitsSet []string `mapstructure:"-" yaml:"-"`
	// Commands is run_command's allowlist; empty leaves run_command out.
	Commands []Command `mapstructure:"commands" yaml:"commands"`
	// Network is the sandboxes' egress allowlist; empty means no network.
	Network Network `mapstructure:"network" yaml:"network"`
}

// ExecLimits bound one sandboxed run.
type ExecLimits struct {
	// Timeout is the default wall-clock limit; MaxTimeout is the most a
	// call may ask for with timeout_seconds.
	Timeout           time.Duration `mapstructure:"timeout" yaml:"timeout"`
	MaxTimeout        time.Duration `mapstructure:"max_timeout" yaml:"max_timeout"`
	MemoryBytes       int64         `mapstructure:"memory_bytes" yaml:"memory_bytes"`
	CPUs              float64       `mapstructure:"cpus" yaml:"cpus"`
	Pids              int64         `mapstructure:"pids" yaml:"pids"`
	NoFile            uint64        `mapstructure:"nofile" yaml:"nofile"`
	NProc             uint64        `mapstructure:"nproc" yaml:"nproc"`
	FileSizeBytes     int64         `mapstructure:"file_size_bytes" yaml:"file_size_bytes"`
	AddressSpaceBytes int64         `mapstructure:"address_space_bytes" yaml:"address_space_bytes"`
	ScratchBytes      int64         `mapstructure:"scratch_bytes" yaml:"scratch_bytes"`
	OutputBytes       int           `mapstructure:"output_bytes" yaml:"output_bytes"`
	// MaxInputBytes caps script plus stdin.
	MaxInputBytes int `mapstructure:"max_input_bytes" yaml:"max_input_bytes"`
}

// Command is one program run_command may run: a fixed argv prefix, and
// what the model may append.
type Command struct {
	// Name is what the model passes as `command`, e.g. git_status.
	Name        string `mapstructure:"name" yaml:"name"`
	Description string `mapstructure:"description" yaml:"description"`
	// Argv is the fixed program and leading arguments; the program is an
	// absolute path visible inside the sandbox (under /usr).
	Argv []string `mapstructure:"argv" yaml:"argv"`
	// MaxArgs caps the arguments the model may append (0: none).
	MaxArgs int `mapstructure:"max_args" yaml:"max_args"`
	// AllowFlags lets appended arguments start with "-"; off by default,
	// since flags such as --output= turn a read into a write.
	AllowFlags bool `mapstructure:"allow_flags" yaml:"allow_flags"`
	// ArgPattern, if set, is a regular expression every appended argument
	// must match in full.
	ArgPattern string `mapstructure:"arg_pattern" yaml:"arg_pattern"`
	// Env is fixed environment for the program, besides the sandbox's.
	Env map[string]string `mapstructure:"env" yaml:"env"`
	// WorkspaceWritable mounts the workspace read-write for this command.
	WorkspaceWritable bool `mapstructure:"workspace_writable" yaml:"workspace_writable"`
}

// Artifacts configures the S3-compatible store behind the artifact tools.
// The credentials are never values here: AccessKeyEnv and SecretKeyEnv name
// the environment variables that hold them.
type Artifacts struct {
	// SecretSources is where the section's secrets come from (bound by Load).
	SecretSources `mapstructure:"-" yaml:"-" json:"-"`
	// Endpoint is host:port, without a scheme; empty turns the tools off.
	Endpoint     string `mapstructure:"endpoint" yaml:"endpoint"`
	Bucket       string `mapstructure:"bucket" yaml:"bucket"`
	Region       string `mapstructure:"region" yaml:"region"`
	UseTLS       bool   `mapstructure:"use_tls" yaml:"use_tls"`
	AccessKeyEnv string `mapstructure:"access_key_env" yaml:"access_key_env"`
	SecretKeyEnv string `mapstructure:"secret_key_env" yaml:"secret_key_env"`
	// The *_file and *_vault keys are the other places the credentials
	// may come from (secrets.go).
	AccessKeyFile  string `mapstructure:"access_key_file" yaml:"access_key_file"`
	AccessKeyVault string `mapstructure:"access_key_vault" yaml:"access_key_vault"`
	SecretKeyFile  string `mapstructure:"secret_key_file" yaml:"secret_key_file"`
	SecretKeyVault string `mapstructure:"secret_key_vault" yaml:"secret_key_vault"`
	// MaxStoreBytes caps one stored artifact; MaxInlineBytes caps what one
	// retrieval returns inline.
	MaxStoreBytes  int64 `mapstructure:"max_store_bytes" yaml:"max_store_bytes"`
	MaxInlineBytes int64 `mapstructure:"max_inline_bytes" yaml:"max_inline_bytes"`
	// MaxListResults caps one page of list_artifacts.
	MaxListResults int `mapstructure:"max_list_results" yaml:"max_list_results"`
}
