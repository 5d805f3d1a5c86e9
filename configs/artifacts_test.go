package configs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestArtifactsDefaultIsOff(t *testing.T) {
	isolate(t)
	l, err := Load(Options{})
	require.NoError(t, err)
	a := l.Config.Artifacts
	require.False(t, a.Configured())
	require.True(t, a.UseTLS, "TLS is the default")
	require.Equal(t, int64(10<<20), a.MaxStoreBytes)
	require.Equal(t, "TOOLWARDEN_ARTIFACTS_SECRET_KEY", a.SecretKeyEnv)
}

// TestArtifactsFromEnv: the variables `scripts/services env` prints are
// enough to configure the store.
func TestArtifactsFromEnv(t *testing.T) {
	isolate(t)
	t.Setenv("TOOLWARDEN_ARTIFACTS_ENDPOINT", "127.0.0.1:19000")
	t.Setenv("TOOLWARDEN_ARTIFACTS_USE_TLS", "false")
	t.Setenv("TOOLWARDEN_ARTIFACTS_BUCKET", "my-bucket")
	l, err := Load(Options{})
	require.NoError(t, err)
	a := l.Config.Artifacts
	require.Equal(t, "127.0.0.1:19000", a.Endpoint)
	require.False(t, a.UseTLS)
	require.Equal(t, "my-bucket", a.Bucket)
	require.Empty(t, l.Widenings, "plain HTTP to loopback widens nothing")
}

func TestArtifactsPlainHTTPToAnotherHostIsAWidening(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", "artifacts:\n  endpoint: minio.internal:9000\n  use_tls: false\n")
	l, err := Load(Options{File: "file.yaml"})
	require.NoError(t, err)
	require.Equal(t, []string{`artifacts.use_tls is false for the non-loopback endpoint "minio.internal:9000" (from file.yaml)`}, l.Widenings)
}

func TestArtifactsErrors(t *testing.T) {
	tests := []struct{ name, file, want string }{
		{"scheme in endpoint", "artifacts:\n  endpoint: https://s3.example.com\n", "file.yaml:2: artifacts.endpoint: \"https://s3.example.com\" has a scheme"},
		{"endpoint without port", "artifacts:\n  endpoint: s3.example.com\n", "file.yaml:2: artifacts.endpoint:"},
		{"endpoint with path", "artifacts:\n  endpoint: s3.example.com:443/bucket\n", "artifacts.endpoint:"},
		{"endpoint with credentials", "artifacts:\n  endpoint: user:pw@s3.example.com:443\n", "artifacts.endpoint:"},
		{"port out of range", "artifacts:\n  endpoint: localhost:70000\n", "has no valid port"},
		{"bad bucket", "artifacts:\n  bucket: My_Bucket\n", "file.yaml:2: artifacts.bucket: \"My_Bucket\" is not an S3 bucket name"},
		{"short bucket", "artifacts:\n  bucket: ab\n", "artifacts.bucket:"},
		{"secret as a value", "artifacts:\n  secret_key_env: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n", "artifacts.secret_key_env:"},
		{"empty key env", "artifacts:\n  access_key_env: \"\"\n", "artifacts.access_key_env:"},
		{"bad region", "artifacts:\n  region: \"eu west\"\n", "artifacts.region:"},
		{"zero store cap", "artifacts:\n  max_store_bytes: 0\n", "file.yaml:2: artifacts.max_store_bytes: must be between 1 and"},
		{"huge store cap", "artifacts:\n  max_store_bytes: 10000000000\n", "artifacts.max_store_bytes: must be between 1 and 1073741824"},
		{"negative inline cap", "artifacts:\n  max_inline_bytes: -1\n", "artifacts.max_inline_bytes:"},
		{"unknown key", "artifacts:\n  secret_key: hunter2\n", "file.yaml:2: artifacts.secret_key: unknown key"},
		{"use_tls not a bool", "artifacts:\n  use_tls: maybe\n", "file.yaml:2: artifacts.use_tls:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			writeFile(t, "file.yaml", tt.file)
			_, err := Load(Options{File: "file.yaml"})
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
			require.NotContains(t, err.Error(), "hunter2")
			require.NotContains(t, err.Error(), "EXAMPLEKEY", "a credential put where its variable's name belongs is not echoed")
		})
	}
}
