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
	// TTL is how long a task and its result are kept from its creation;
	// a client may ask for less, never more.
	TTL time.Duration `mapstructure:"ttl" yaml:"ttl"`
	// PollInterval is the polling interval suggested to clients.
	PollInterval time.Duration `mapstructure:"poll_interval" yaml:"poll_interval"`
}

// MaxTasksTotal bounds tasks.max_total.
const MaxTasksTotal = 4096

func (t Tasks) validate(add func(string, string, ...any)) {
	if t.MaxPerIdentity < 1 || t.MaxPerIdentity > MaxTasksTotal {
		add("tasks.max_per_identity", "must be between 1 and %d, got %d", MaxTasksTotal, t.MaxPerIdentity)
	}
	if t.MaxTotal < 1 || t.MaxTotal > MaxTasksTotal {
		add("tasks.max_total", "must be between 1 and %d, got %d", MaxTasksTotal, t.MaxTotal)
	}
	durationIn(add, "tasks.ttl", t.TTL, 7*24*time.Hour)
	durationIn(add, "tasks.poll_interval", t.PollInterval, time.Minute)
}
