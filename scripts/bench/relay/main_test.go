package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain runs the relay itself when the test starts its own binary as
// the relay (TestRelayCat).
func TestMain(m *testing.M) {
	if os.Getenv("RELAY_TEST_MAIN") == "1" {
		os.Args = append([]string{"relay"}, strings.Fields(os.Getenv("RELAY_TEST_ARGS"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestCopyLines(t *testing.T) {
	var w bytes.Buffer
	long := strings.Repeat("x", 200<<10) + "\n"
	copyLines(&w, strings.NewReader("a\n"+long+"{\"id\":1}\nlast"))
	if got, want := w.String(), "a\n"+long+"{\"id\":1}\nlast"; got != want {
		t.Fatalf("copied %d bytes, want %d", len(got), len(want))
	}
}

// TestRelayCat relays through cat: every line comes back as sent, and the
// relay ends when its input does.
func TestRelayCat(t *testing.T) {
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skip("no cat")
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "RELAY_TEST_MAIN=1", "RELAY_TEST_ARGS="+cat)
	in := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n" + strings.Repeat("y", 100<<10) + "\n"
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("relay: %v", err)
	}
	if string(out) != in {
		t.Fatalf("relayed %d bytes, want %d as sent", len(out), len(in))
	}
}
