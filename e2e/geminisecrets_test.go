package e2e

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	fake "github.com/toolwarden/toolwarden/internal/llmfake/gemini"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// geminiRunNoEnvKey runs `toolwarden gemini` with neither GEMINI_API_KEY
// nor GOOGLE_API_KEY set: the key must come from the config.
func geminiRunNoEnvKey(t *testing.T, env []string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.CommandContext(ctxT(t), binary, append([]string{"gemini"}, args...)...)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GEMINI_API_KEY=") && !strings.HasPrefix(kv, "GOOGLE_API_KEY=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// TestGeminiBinaryAPIKeyFromVault: the built binary reads the Gemini API
// key from bridge.api_key_vault, a real dev-mode OpenBao (its token in a
// 0600 file), and sends it to the model; neither the key nor the token
// is in its output, its debug log or its audit log. A key file others
// may read is refused naming bridge.api_key_file, before any request.
func TestGeminiBinaryAPIKeyFromVault(t *testing.T) {
	bao := testenv.StartOpenBao(t)
	const key = "AIza-from-openbao-never-printed"
	bao.Put(t, "secret/data/gemini", map[string]string{"api_key": key})
	ws, env := geminiWorkspace(t)
	token := writePrivate(t, ws, "bao-token", bao.RootToken+"\n", 0o600)
	cfg := writeConfig(t, ws, "log:\n  level: debug\nbridge:\n  currency: USD\n  prices:\n    - {model: gemini-2.5-flash, input: \"1.00\", output: \"2.00\"}\n"+
		"  api_key_vault: secret/data/gemini#api_key\nsecrets:\n  vault:\n    address: "+bao.Address+"\n    token_file: "+token+"\n")
	f := readHelloScript()
	defer f.Close()
	f.CountWith(func(fake.Request) int { return 100 })
	stdout, stderr, err := geminiRunNoEnvKey(t, env, "--config", cfg, "--base-url", f.URL, "What does hello.txt say?")
	require.NoError(t, err, stderr)
	assert.Contains(t, stdout, "The file greets you")
	reqs := f.Requests()
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		assert.Equal(t, key, r.APIKey, "the model got the key from OpenBao")
	}
	logs := stdout + stderr + auditText(t, auditPathOf(t, env))
	for _, v := range []string{key, bao.RootToken} {
		assert.NotContains(t, logs, v, "a secret reached the output or the logs")
	}

	loose := writePrivate(t, ws, "gemini-key", "AIza-in-a-loose-file\n", 0o644)
	cfg = writeConfig(t, ws, "bridge:\n  api_key_file: "+loose+"\n")
	g := fake.New()
	defer g.Close()
	_, stderr, err = geminiRunNoEnvKey(t, env, "--config", cfg, "--base-url", g.URL, "hi")
	require.Error(t, err)
	assert.Contains(t, stderr, "bridge.api_key_file: "+loose+" has mode 0644: a secret file must be 0600 or stricter")
	assert.NotContains(t, stderr, "AIza-in-a-loose-file")
	assert.Empty(t, g.Requests())
}

// freePort is a loopback address nobody listens on (yet).
func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// TestGeminiBinaryBridgeConfigMetrics: driving a --server-cmd server, the
// bridge reads prices (a tier above 200k prompt tokens), the budget and
// the API key file from --bridge-config, and serves its spend at
// --metrics while the run is under way.
func TestGeminiBinaryBridgeConfigMetrics(t *testing.T) {
	t.Parallel()
	ws, env := geminiWorkspace(t)
	keyFile := writePrivate(t, ws, "gemini-key", "AIza-from-a-0600-file\n", 0o600)
	bcfg := writePrivate(t, ws, "bridge.yaml", "bridge:\n  currency: EUR\n  api_key_file: "+keyFile+"\n  prices:\n"+
		"    - model: gemini-2.5-pro\n      input: \"1.25\"\n      output: \"10.00\"\n"+
		"      tiers: [{prompt_tokens: 200000, input: \"2.50\", output: \"15.00\"}]\n  budget: {max_per_run: \"5\"}\n", 0o600)
	f := fake.New(
		fake.Turn{Parts: []map[string]any{fake.Call("e1", "read_file", map[string]any{"path": "hello.txt"})}, Usage: fake.Usage(250000, 0, 1000, 0)},
		fake.Turn{Hang: true})
	defer f.Close()
	f.CountWith(func(fake.Request) int { return 1000 })
	addr := freePort(t)

	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "gemini", "--model", "gemini-2.5-pro", "--base-url", f.URL, "--timeout", "10m",
		"--server-cmd", binary+" serve --workspace '"+ws+"'", "--bridge-config", bcfg, "--metrics", addr, "read hello")
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GEMINI_API_KEY=") && !strings.HasPrefix(kv, "GOOGLE_API_KEY=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stderr testenv.SyncBuffer // written by exec's copier while the test reads it
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	defer func() { cancel(); _ = cmd.Wait() }()

	// 250000 prompt tokens at the tier's 2.50 and 1000 output at 15.00:
	// 0.625 + 0.015 EUR, 640000 micro-units.
	want := `toolwarden_bridge_spend_micros_total{currency="EUR",model="gemini-2.5-pro",purpose="turn"} 640000`
	var body string
	for deadline := time.Now().Add(45 * time.Second); time.Now().Before(deadline) && !strings.Contains(body, want); time.Sleep(200 * time.Millisecond) {
		body = scrapeText(addr)
	}
	require.Contains(t, body, want, "stderr: %s", stderr.String())
	assert.Contains(t, body, `toolwarden_bridge_tokens_total{kind="input",model="gemini-2.5-pro"} 250000`)
	assert.Contains(t, body, `toolwarden_bridge_requests_total{model="gemini-2.5-pro",purpose="turn"} 1`)
	for _, r := range f.Requests() {
		assert.Equal(t, "AIza-from-a-0600-file", r.APIKey)
	}
	assert.NotContains(t, stderr.String(), "AIza-from-a-0600-file")
}

func scrapeText(addr string) string {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestGeminiBinaryBridgeFlagsRefused: --bridge-config reads no server
// section, its prices are validated as the config's, and --metrics stays
// on loopback unless --metrics-allow-remote.
func TestGeminiBinaryBridgeFlagsRefused(t *testing.T) {
	t.Parallel()
	ws, env := geminiWorkspace(t)
	f := fake.New()
	defer f.Close()
	server := []string{"--base-url", f.URL, "--server-cmd", binary + " serve --workspace '" + ws + "'"}
	for _, c := range []struct{ yaml, want string }{
		{"bridge:\n  currency: USD\npolicy:\n  allow: ['*']\n", "policy: --bridge-config reads only the bridge: and secrets: sections"},
		{"bridge:\n  currency: usd\n  prices: [{model: gemini-2.5-flash, input: \"1\", output: \"2\"}]\n", "bridge.currency: \"usd\" is not a currency code"},
		{"bridge:\n  currency: USD\n  prices: [{model: gemini-2.5-flash, input: \"1\", output: \"2\", tiers: [{prompt_tokens: 0, input: \"2\", output: \"3\"}]}]\n",
			"bridge.prices[0].tiers[0].prompt_tokens: must be positive"},
		{"bridge:\n  bogus: 1\n", "field bogus not found"},
	} {
		p := writePrivate(t, ws, "bridge.yaml", c.yaml, 0o600)
		_, stderr, err := geminiRun(t, env, append(server, "--bridge-config", p, "hi")...)
		require.Error(t, err)
		assert.Contains(t, stderr, c.want)
	}
	_, stderr, err := geminiRun(t, env, "--workspace", ws, "--base-url", f.URL, "--bridge-config", "/nonexistent", "hi")
	require.Error(t, err)
	assert.Contains(t, stderr, "--bridge-config is for --server-cmd and --server-url")
	_, stderr, err = geminiRun(t, env, append(server, "--metrics", "0.0.0.0:9465", "hi")...)
	require.Error(t, err)
	assert.Contains(t, stderr, `--metrics: "0.0.0.0:9465" is not a loopback address; pass --metrics-allow-remote`)
	assert.Empty(t, f.Requests())
}

// TestGeminiBinaryServerCmdNeverSeesTheConfiguredKey: with the key in a
// variable --bridge-config's bridge.api_key_env names, and the Vault
// token's variable, a --server-cmd server inherits neither.
func TestGeminiBinaryServerCmdNeverSeesTheConfiguredKey(t *testing.T) {
	t.Parallel()
	ws, env := geminiWorkspace(t)
	f := readHelloScript()
	defer f.Close()
	bcfg := writePrivate(t, ws, "bridge.yaml", "bridge:\n  api_key_env: TEAM_GEMINI_KEY\n", 0o600)
	dump := filepath.Join(t.TempDir(), "server-env")
	serverCmd := "sh -c 'env > \"$0\"; exec \"$1\" serve --workspace \"$2\"' '" + dump + "' '" + binary + "' '" + ws + "'"
	stdout, stderr, err := geminiRunNoEnvKey(t, append(env, "TEAM_GEMINI_KEY="+geminiKey),
		"--base-url", f.URL, "--server-cmd", serverCmd, "--bridge-config", bcfg, "What does hello.txt say?")
	require.NoError(t, err, stderr)
	checkReadHello(t, f, stdout, stderr) // the model got geminiKey from TEAM_GEMINI_KEY
	got, err := os.ReadFile(dump)
	require.NoError(t, err)
	assert.Contains(t, string(got), "PATH=")
	assert.NotContains(t, string(got), geminiKey, "the server inherits no configured key variable")
	assert.NotContains(t, stdout+stderr, geminiKey)
}
