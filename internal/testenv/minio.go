package testenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// MinIO is a private MinIO server for one test, on its own port and data
// directory, so that a test may stop and restart it without disturbing the
// shared one scripts/services runs. The binary is the one scripts/services
// built (TOOLWARDEN_TEST_MINIO_BIN).
type MinIO struct {
	Endpoint, AccessKey, SecretKey, Bucket string

	bin, data string
	cmd       *exec.Cmd
	done      chan struct{}
}

// StartMinIO starts a private MinIO with a bucket, stopped when t ends.
func StartMinIO(t testing.TB) *MinIO {
	t.Helper()
	bin := Need(t, "TOOLWARDEN_TEST_MINIO_BIN")[0]
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &MinIO{Endpoint: ln.Addr().String(), AccessKey: "private-test-user", SecretKey: "private-test-secret-0123456789",
		Bucket: "private-artifacts", bin: bin, data: filepath.Join(t.TempDir(), "data")}
	ln.Close()
	t.Cleanup(m.Stop)
	m.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Client(t).MakeBucket(ctx, m.Bucket, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
		t.Fatalf("private MinIO: make bucket: %v", err)
	}
	return m
}

// Start (re)starts the server on its port and data and waits until it is
// ready.
func (m *MinIO) Start(t testing.TB) {
	t.Helper()
	cmd := exec.Command(m.bin, "server", "--quiet", "--address", m.Endpoint, m.data)
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+m.AccessKey, "MINIO_ROOT_PASSWORD="+m.SecretKey,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off")
	if err := cmd.Start(); err != nil {
		t.Fatalf("private MinIO: %v", err)
	}
	m.cmd, m.done = cmd, make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(m.done)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + m.Endpoint + "/minio/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-m.done:
			t.Fatalf("private MinIO exited at start")
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("private MinIO at %s not ready after 30s", m.Endpoint)
}

// Stop stops the server and waits for it to exit.
func (m *MinIO) Stop() {
	if m.cmd == nil {
		return
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(15 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.done
	}
	m.cmd = nil
}

// Kill kills the server with SIGKILL, as a crash would, and waits for it.
func (m *MinIO) Kill() {
	if m.cmd == nil {
		return
	}
	_ = m.cmd.Process.Kill()
	<-m.done
	m.cmd = nil
}

// Client is a minio-go client of the server with its root credentials.
func (m *MinIO) Client(t testing.TB) *minio.Client {
	c, err := minio.New(m.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(m.AccessKey, m.SecretKey, ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Env sets, for t, the TOOLWARDEN_ARTIFACTS_* variables that point
// toolwarden at this server.
func (m *MinIO) Env(t *testing.T) {
	for k, v := range map[string]string{
		"TOOLWARDEN_ARTIFACTS_ENDPOINT": m.Endpoint, "TOOLWARDEN_ARTIFACTS_BUCKET": m.Bucket,
		"TOOLWARDEN_ARTIFACTS_USE_TLS": "false", "TOOLWARDEN_ARTIFACTS_REGION": "us-east-1",
		"TOOLWARDEN_ARTIFACTS_ACCESS_KEY": m.AccessKey, "TOOLWARDEN_ARTIFACTS_SECRET_KEY": m.SecretKey,
	} {
		t.Setenv(k, v)
	}
}

func (m *MinIO) String() string { return fmt.Sprintf("MinIO at %s", m.Endpoint) }
