package configs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClusterDefaultIsInMemory(t *testing.T) {
	isolate(t)
	l, err := Load(Options{})
	require.NoError(t, err)
	require.False(t, l.Config.Cluster.Shared())
	require.NotEmpty(t, l.Config.Cluster.Replica(), "a replica is named even alone")
}

func TestClusterFromEnv(t *testing.T) {
	isolate(t)
	t.Setenv("TOOLWARDEN_CLUSTER_REDIS_URL", "redis://127.0.0.1:6379/0")
	t.Setenv("TOOLWARDEN_CLUSTER_SECRET_ENV", "TW_SECRET")
	t.Setenv("TOOLWARDEN_CLUSTER_REPLICA_ID", "tw-a")
	l, err := Load(Options{})
	require.NoError(t, err)
	c := l.Config.Cluster
	require.True(t, c.Shared())
	require.Equal(t, "tw-a", c.Replica())
	_, err = c.ClusterSecret()
	require.ErrorContains(t, err, "cluster.secret_env: the variable TW_SECRET is empty or unset")
	t.Setenv("TW_SECRET", "short")
	_, err = c.ClusterSecret()
	require.ErrorContains(t, err, "cluster.secret_env: the key in TW_SECRET has 5 bytes")
	require.NotContains(t, err.Error(), "short")
	t.Setenv("TW_SECRET", strings.Repeat("k", MinClusterSecretBytes))
	key, err := c.ClusterSecret()
	require.NoError(t, err)
	require.Len(t, key, MinClusterSecretBytes)
}

func TestClusterErrors(t *testing.T) {
	const secret = "  secret_env: TW_SECRET\n"
	tests := []struct{ name, file, want string }{
		{"password in the URL", "cluster:\n  redis_url: redis://:hunter2@127.0.0.1:6379/0\n" + secret, "cluster.redis_url: holds a password"},
		{"not redis", "cluster:\n  redis_url: http://127.0.0.1:6379\n" + secret, `cluster.redis_url: "http": the scheme must be redis://`},
		{"no host", "cluster:\n  redis_url: redis:///0\n" + secret, "cluster.redis_url: names no host"},
		{"no secret", "cluster:\n  redis_url: redis://127.0.0.1:6379/0\n", "cluster.secret_env: must name"},
		{"secret as a value", "cluster:\n  secret_env: hunter2/hunter2+hunter2\n", "cluster.secret_env: is not an environment variable name"},
		{"password as a value", "cluster:\n  redis_password_env: hunter2=\n", "cluster.redis_password_env: is not"},
		{"bad replica", "cluster:\n  replica_id: \"a b\"\n", "cluster.replica_id:"},
		{"unknown key", "cluster:\n  redis_password: hunter2\n", "cluster.redis_password: unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			writeFile(t, "file.yaml", tt.file)
			_, err := Load(Options{File: "file.yaml"})
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
			require.NotContains(t, err.Error(), "hunter2", "a secret put in the config is not echoed")
		})
	}
}
