package testenv

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// OpenBao is a private OpenBao server in dev mode (in memory, unsealed,
// KV v2 mounted at secret/) for one test, on its own loopback port. The
// binary is the one scripts/secrets/setup-openbao provides
// (TOOLWARDEN_TEST_OPENBAO).
type OpenBao struct {
	// Address is the server's URL; RootToken its dev root token.
	Address, RootToken string
}

// StartOpenBao starts a private dev-mode OpenBao, stopped when t ends.
func StartOpenBao(t testing.TB) *OpenBao {
	t.Helper()
	bin := Need(t, "TOOLWARDEN_TEST_OPENBAO")[0]
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	tok := make([]byte, 16)
	_, _ = rand.Read(tok)
	b := &OpenBao{Address: "http://" + addr, RootToken: "root-" + hex.EncodeToString(tok)}
	cmd := exec.Command(bin, "server", "-dev", "-dev-root-token-id="+b.RootToken, "-dev-listen-address="+addr, "-log-level=warn")
	cmd.Env = []string{"HOME=" + t.TempDir()}
	if err := cmd.Start(); err != nil {
		t.Fatalf("private OpenBao: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(b.Address + "/v1/sys/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return b
			}
		}
		select {
		case <-done:
			t.Fatalf("private OpenBao exited at start")
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("private OpenBao at %s not ready after 60s", b.Address)
	return nil
}

// Put writes data as the KV v2 secret at path (e.g. "secret/data/app").
func (b *OpenBao) Put(t testing.TB, path string, data map[string]string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"data": data})
	req, err := http.NewRequest(http.MethodPost, b.Address+"/v1/"+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Vault-Token", b.RootToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("OpenBao put %s: %v", path, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNoContent {
		t.Fatalf("OpenBao put %s: %s", path, resp.Status)
	}
}
