package configs

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTasksDefaultsAndEnv(t *testing.T) {
	isolate(t)
	l, err := Load(Options{})
	require.NoError(t, err)
	require.Equal(t, Tasks{MaxPerIdentity: 16, MaxTotal: 256, MaxKeptPerIdentity: 1024, TTL: time.Hour, PollInterval: 2 * time.Second}, l.Config.Tasks)
	t.Setenv("TOOLWARDEN_TASKS_TTL", "24h")
	l, err = Load(Options{})
	require.NoError(t, err)
	require.Equal(t, 24*time.Hour, l.Config.Tasks.TTL)
}

func TestTasksErrors(t *testing.T) {
	tests := []struct{ name, file, want string }{
		{"no task", "tasks:\n  max_per_identity: 0\n", "tasks.max_per_identity: must be between 1 and 4096, got 0"},
		{"unbounded", "tasks:\n  max_total: 1000000\n", "tasks.max_total: must be between 1 and 4096, got 1000000"},
		{"negative", "tasks:\n  max_total: -1\n", "tasks.max_total:"},
		{"keeps fewer than it runs", "tasks:\n  max_kept_per_identity: 2\n", "tasks.max_kept_per_identity: must be between tasks.max_per_identity (16) and 65536, got 2"},
		{"kept for ever", "tasks:\n  ttl: 9000h\n", "tasks.ttl: must be between 0 and 168h0m0s"},
		{"no ttl", "tasks:\n  ttl: 0s\n", "tasks.ttl:"},
		{"poll too slow", "tasks:\n  poll_interval: 1h\n", "tasks.poll_interval:"},
		{"unknown key", "tasks:\n  max_running: 3\n", "tasks.max_running: unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			writeFile(t, "file.yaml", tt.file)
			_, err := Load(Options{File: "file.yaml"})
			require.ErrorContains(t, err, tt.want)
		})
	}
}
