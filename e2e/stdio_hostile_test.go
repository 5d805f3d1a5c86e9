package e2e

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
	t.Parallel()
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

// TestStdioStrictJSONRPCBinary is issue 20.2 and 20.3 against the real
// binary: a tools/call as the first line is refused (no file content
// comes back), each message a lenient decoder would take is refused with
// -32600 or -32700 naming the rule, and a ping is answered after each one.
func TestStdioStrictJSONRPCBinary(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	cmd := exec.Command(binary, "serve", "--workspace", ws)
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	type reply struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	send := func(msg string) (reply, string) {
		t.Helper()
		_, err := io.WriteString(stdin, msg+"\n")
		require.NoError(t, err)
		select {
		case line, ok := <-lines:
			require.True(t, ok, "the server closed stdout")
			var r reply
			require.NoError(t, json.Unmarshal([]byte(line), &r), line)
			return r, line
		case <-time.After(30 * time.Second):
			t.Fatalf("no answer to %.200s", msg)
		}
		return reply{}, ""
	}
	refused := func(msg string, code int, id, rule string) {
		t.Helper()
		r, line := send(msg)
		require.NotNil(t, r.Error, line)
		require.Equal(t, code, r.Error.Code, line)
		require.Equal(t, id, string(r.ID), line)
		require.Contains(t, r.Error.Message, rule, line)
		r, line = send(`{"jsonrpc":"2.0","id":"alive","method":"ping"}`)
		require.Nil(t, r.Error, line)
		require.Equal(t, `"alive"`, string(r.ID))
	}

	readHello := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"hello.txt"}}}`
	r, line := send(readHello)
	require.NotNil(t, r.Error, line)
	require.Contains(t, r.Error.Message, `"tools/call" before initialize`)
	require.NotContains(t, line, "hello from toolwarden")

	_, _ = send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`)
	_, err = io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	require.NoError(t, err)
	for _, h := range []struct {
		msg      string
		code     int
		id, rule string
	}{
		{`{"jsonrpc":"2.0","id":2,"Method":"tools/list"}`, -32600, "2", `unknown member "Method"`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","paramſ":{"name":"read_file","arguments":{"path":"hello.txt"}}}`, -32600, "3", "unknown member"},
		{`{"jsonrpc":"2.0","id":4,"method":"ping","method":"tools/list"}`, -32600, "4", "duplicate"},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}`, -32600, "null", `"id" must be`},
		{`{"jsonrpc":"2.0","id":12345678901234567890123,"method":"tools/list"}`, -32600, "null", "2^53-1"},
		{`{"jsonrpc":"2.0","id":2.5,"method":"tools/list"}`, -32600, "null", "integer"},
		{`{"jsonrpc":"2.1","id":5,"method":"tools/list"}`, -32600, "null", `"2.0"`},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"hello.txt","Path":"../outside.txt"}}}`, -32600, "6", "collides"},
		{`{"jsonrpc":"2.0","id":7,"method":"ping"}garbage`, -32700, "7", "trailing data"},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`, -32600, "8", "nesting"},
		{`[{"jsonrpc":"2.0","id":9,"method":"ping"}]`, -32600, "null", "batch"},
	} {
		refused(h.msg, h.code, h.id, h.rule)
	}
	r, line = send(strings.Replace(readHello, `"id":1`, `"id":9007199254740991`, 1))
	require.Nil(t, r.Error, line)
	require.Equal(t, "9007199254740991", string(r.ID))
	require.Contains(t, line, "hello from toolwarden")
}
