package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// writePrivate writes a file of the given mode beside the workspace.
func writePrivate(t *testing.T, ws, name, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(filepath.Dir(ws), name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	require.NoError(t, os.Chmod(p, mode))
	return p
}

// runAll runs the binary and returns its stdout and stderr together.
func runAll(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// artifactsConfig is the artifacts section for the private MinIO m, with
// the credentials' keys given by creds.
func artifactsConfig(m *testenv.MinIO, creds string) string {
	return "artifacts:\n  endpoint: " + m.Endpoint + "\n  bucket: " + m.Bucket + "\n  region: us-east-1\n  use_tls: false\n" + creds
}

// TestSecretsVaultBinary: the built binary stores an artifact with the
// S3 access key from a .env file the config names and the secret key from
// a real dev-mode OpenBao (token from a 0600 file); neither the token nor
// the keys appear in its output, its debug log or its audit log.
func TestSecretsVaultBinary(t *testing.T) {
	m := testenv.StartMinIO(t)
	bao := testenv.StartOpenBao(t)
	bao.Put(t, "secret/data/toolwarden", map[string]string{"s3_secret": m.SecretKey})
	ws, env := workspace(t)
	dotenv := writePrivate(t, ws, "toolwarden.env", "S3_ACCESS="+m.AccessKey+"\n", 0o600)
	token := writePrivate(t, ws, "bao-token", bao.RootToken+"\n", 0o600)
	cfg := writeConfig(t, ws, "log:\n  level: debug\napproval:\n  modes:\n    store_artifact: allow\npolicy:\n  allow: ['*_artifact*']\n"+
		artifactsConfig(m, "  access_key_env: S3_ACCESS\n  secret_key_vault: secret/data/toolwarden#s3_secret\n")+
		"secrets:\n  dotenv: "+dotenv+"\n  vault:\n    address: "+bao.Address+"\n    token_file: "+token+"\n")

	task := uuid.NewString()
	out, err := runAll(t, env, "call", "--config", cfg, "store_artifact",
		`{"task_id":"`+task+`","name":"a.txt","content":"from vault creds\n","encoding":"text"}`)
	require.NoError(t, err, out)
	require.Contains(t, out, `tasks/`+task+`/artifacts/a.txt`)
	out2, err := runAll(t, env, "call", "--config", cfg, "retrieve_artifact", `{"key":"tasks/`+task+`/artifacts/a.txt"}`)
	require.NoError(t, err, out2)
	require.Contains(t, out2, "from vault creds")

	logs := out + out2 + auditText(t, auditPathOf(t, env))
	for _, v := range []string{bao.RootToken, m.SecretKey, m.AccessKey} {
		require.NotContains(t, logs, v, "a secret reached the output or the logs")
	}

	// A wrong token: the call fails at start naming the key, not the token.
	require.NoError(t, os.WriteFile(token, []byte("not-the-token"), 0o600))
	out, err = runAll(t, env, "call", "--config", cfg, "list_artifacts", `{"task_id":"`+task+`"}`)
	require.Error(t, err)
	require.Contains(t, out, "artifacts.secret_key_vault")
	require.Contains(t, out, "403")
	require.NotContains(t, out, "not-the-token")
}

// TestSecretsDotenvModeBinary: a .env file others may read is refused at
// start naming the key; a .env in the workspace is never read unless the
// config names it; a secret file of mode 0644 is refused naming its key.
func TestSecretsDotenvModeBinary(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	loose := writePrivate(t, ws, "loose.env", "GRAPH_PW=leaky-value\n", 0o644)
	cfg := writeConfig(t, ws, "secrets:\n  dotenv: "+loose+"\n")
	out, err := runAll(t, env, "config", "check", "--config", cfg)
	require.Error(t, err)
	require.Contains(t, out, "secrets.dotenv: "+loose+" has mode 0644: a secret file must be 0600 or stricter")
	require.NotContains(t, out, "leaky-value")
	out, err = runAll(t, env, "call", "--config", cfg, "read_file", `{"path":"hello.txt"}`)
	require.Error(t, err)
	require.Contains(t, out, "secrets.dotenv")

	cfg = writeConfig(t, ws, "artifacts:\n  secret_key_file: "+loose+"\n")
	out, err = runAll(t, env, "config", "check", "--config", cfg)
	require.Error(t, err)
	require.Contains(t, out, "artifacts.secret_key_file: "+loose+" has mode 0644")

	// The workspace's own .env is not a source: the model can write it.
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("TOOLWARDEN_ARTIFACTS_ACCESS_KEY=planted\nTOOLWARDEN_ARTIFACTS_SECRET_KEY=planted\n"), 0o600))
	cfg = writeConfig(t, ws, "policy:\n  allow: ['*_artifact*']\nartifacts:\n  endpoint: 127.0.0.1:1\n  region: us-east-1\n  use_tls: false\n")
	out, _ = runAll(t, env, "call", "--config", cfg, "list_artifacts", `{"task_id":"`+uuid.NewString()+`"}`)
	require.Contains(t, out, "no credentials")
}
