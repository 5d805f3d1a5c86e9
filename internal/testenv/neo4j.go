package testenv

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Neo4j is a Neo4j of one test's own, started with scripts/services in a
// state directory and on a port of its own, so that stopping or killing
// it disturbs no other test. Starting it takes about a minute.
type Neo4j struct {
	URI, Password string

	env   []string
	state string
}

// StartNeo4j starts a private Neo4j, stopped when t ends.
func StartNeo4j(t testing.TB) *Neo4j {
	t.Helper()
	Need(t, "TOOLWARDEN_GRAPH_URI") // the services can run here
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	state := t.TempDir()
	n := &Neo4j{URI: "bolt://127.0.0.1:" + port, state: state,
		env: append(os.Environ(), "TOOLWARDEN_SERVICES_DIR="+state, "TOOLWARDEN_NEO4J_PORT="+port)}
	n.Start(t)
	t.Cleanup(func() { n.services(t, "down") })
	for _, line := range strings.Split(n.services(t, "env"), "\n") {
		if v, ok := strings.CutPrefix(line, "export NEO4J_PASSWORD="); ok {
			n.Password = v
		}
	}
	if n.Password == "" {
		t.Fatal("private Neo4j: no password in scripts/services env")
	}
	return n
}

// Start (re)starts the server and waits until Bolt answers.
func (n *Neo4j) Start(t testing.TB) { t.Helper(); n.services(t, "up") }

// Stop stops the server cleanly.
func (n *Neo4j) Stop(t testing.TB) { t.Helper(); n.services(t, "down") }

// Kill kills the server with SIGKILL, as a crash would, and waits for it.
func (n *Neo4j) Kill(t testing.TB) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(n.state, "neo4j", "pid"))
	if err != nil {
		t.Fatalf("private Neo4j: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("private Neo4j: pid file: %v", err)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for deadline := time.Now().Add(30 * time.Second); alive(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("private Neo4j: pid %d still alive 30 s after SIGKILL", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// alive reports whether pid runs: neither gone nor a zombie.
func alive(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}

func (n *Neo4j) services(t testing.TB, cmd string) string {
	t.Helper()
	c := exec.Command(filepath.Join(repoRoot(), "scripts", "services"), cmd, "neo4j")
	c.Env = n.env
	out, err := c.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("scripts/services %s neo4j: %v: %s", cmd, err, stderr)
	}
	return string(out)
}

// repoRoot is the repository's root, found from this file's place in it.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}
