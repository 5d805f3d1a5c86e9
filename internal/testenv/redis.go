package testenv

import (
	"fmt"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Redis is a Redis or Valkey server for a test: the shared one
// scripts/services runs (NeedRedis), or a private one on its own port
// (StartRedis) that the test may stop and start again.
type Redis struct {
	URL, Password string

	bin, addr string
	cmd       *exec.Cmd
	done      chan struct{}
}

// NeedRedis returns the shared server scripts/services runs
// (TOOLWARDEN_TEST_REDIS_URL and _PASSWORD), calling Missing without one.
func NeedRedis(t testing.TB) *Redis {
	t.Helper()
	v := Need(t, "TOOLWARDEN_TEST_REDIS_URL", "TOOLWARDEN_TEST_REDIS_PASSWORD")
	return &Redis{URL: v[0], Password: v[1]}
}

// StartRedis starts a private server, without persistence, stopped when
// t ends. The binary is the one scripts/services installed
// (TOOLWARDEN_TEST_REDIS_BIN).
func StartRedis(t testing.TB) *Redis {
	t.Helper()
	bin := Need(t, "TOOLWARDEN_TEST_REDIS_BIN")[0]
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r := &Redis{URL: "redis://" + addr + "/0", Password: "private-test-password-0123456789", bin: bin, addr: addr}
	t.Cleanup(r.Stop)
	r.Start(t)
	return r
}

// Start (re)starts the private server on its port and waits until it
// accepts connections. The password goes in on stdin, not in argv.
func (r *Redis) Start(t testing.TB) {
	t.Helper()
	_, port, _ := net.SplitHostPort(r.addr)
	cmd := exec.Command(r.bin, "-")
	cmd.Stdin = strings.NewReader(fmt.Sprintf("bind 127.0.0.1\nport %s\nrequirepass %s\nsave \"\"\nappendonly no\n", port, r.Password))
	if err := cmd.Start(); err != nil {
		t.Fatalf("private Redis: %v", err)
	}
	r.cmd, r.done = cmd, make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(r.done)
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", r.addr); err == nil {
			c.Close()
			return
		}
		select {
		case <-r.done:
			t.Fatalf("private Redis exited at start")
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("private Redis at %s not ready after 15s", r.addr)
}

// Stop stops the private server and waits for it to exit.
func (r *Redis) Stop() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
	r.cmd = nil
}
