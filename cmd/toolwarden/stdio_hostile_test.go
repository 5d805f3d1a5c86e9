package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStdioSurvivesHostileInput sends malformed JSON-RPC, deeply nested
// params and a 20 MiB line to the real binary, then checks that it still
// answers a normal request.
func TestStdioSurvivesHostileInput(t *testing.T) {
	ws, env := workspace(t)
	cmd := exec.Command(binary, "serve", "--workspace", ws)
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	nested := strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000)
	hostile := []string{
		"not json at all",
		"{",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + nested + `}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":` + nested + `}}`,
		`{"jsonrpc":"2.0","id":3,"method":"nope/nope"}`,
		`[1,2,3]`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"` + strings.Repeat("a", 20<<20) + `"}}}`,
	}
	go func() {
		for _, line := range hostile {
			_, _ = io.WriteString(stdin, line+"\n")
		}
		_, _ = io.WriteString(stdin, `{"jsonrpc":"2.0","id":100,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`+"\n")
		_, _ = io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		_, _ = io.WriteString(stdin, `{"jsonrpc":"2.0","id":101,"method":"tools/list"}`+"\n")
	}()

	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var msg struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(sc.Bytes(), &msg) == nil && string(msg.ID) == "101" {
				found <- sc.Text()
				return
			}
		}
	}()
	select {
	case line := <-found:
		require.Contains(t, line, "read_file")
	case <-time.After(60 * time.Second):
		t.Fatal("no answer to tools/list after hostile input")
	}
}
