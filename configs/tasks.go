package configs

import "time"

// Tasks bounds the calls clients run as MCP tasks (a tools/call with a
// task request, SEP-2663): they are answered at once with a task ID and
// run on, their status and result fetched later (tasks/get,
// tasks/result) by the identity that started them, from any replica
// when cluster.redis_url is set.
type Tasks struct {
	// MaxPerIdentity and MaxTotal bound the tasks running at once on one
	// replica: each holds one goroutine (and, waiting for a human, a
	// place among approval.max_pending), nothing per client connection.
	MaxPerIdentity int `mapstructure:"max_per_identity" yaml:"max_per_identity"`
	MaxTotal       int `mapstructure:"max_total" yaml:"max_total"`
	// MaxKeptPerIdentity bounds the tasks one identity has stored at
	// once, running or ended (each may hold a result of up to
	// limits.max_output_bytes_per_call until its TTL).
	MaxKeptPerIdentity int `mapstructure:"max_kept_per_identity" yaml:"max_kept_per_identity"`
	// TTL is how long a task and its result are kept from its creation;
	// a client may ask for less, never more.
	TTL time.Duration `mapstructure:"ttl" yaml:"ttl"`
	// PollInterval is the polling interval suggested to clients.
	PollInterval time.Duration `mapstructure:"poll_interval" yaml:"poll_interval"`
}

// MaxTasksTotal bounds tasks.max_total.
const MaxTasksTotal = 4096

// MaxTasksKept bounds tasks.max_kept_per_identity.
const MaxTasksKept = 65536

func (t Tasks) validate(add func(string, string, ...any)) {
	if t.MaxPerIdentity < 1 || t.MaxPerIdentity > MaxTasksTotal {
		add("tasks.max_per_identity", "must be between 1 and %d, got %d", MaxTasksTotal, t.MaxPerIdentity)
	}
	if t.MaxTotal < 1 || t.MaxTotal > MaxTasksTotal {
		add("tasks.max_total", "must be between 1 and %d, got %d", MaxTasksTotal, t.MaxTotal)
	}
	if t.MaxKeptPerIdentity < t.MaxPerIdentity || t.MaxKeptPerIdentity > MaxTasksKept {
		add("tasks.max_kept_per_identity", "must be between tasks.max_per_identity (%d) and %d, got %d", t.MaxPerIdentity, MaxTasksKept, t.MaxKeptPerIdentity)
	}
	durationIn(add, "tasks.ttl", t.TTL, 7*24*time.Hour)
	durationIn(add, "tasks.poll_interval", t.PollInterval, time.Minute)
}
