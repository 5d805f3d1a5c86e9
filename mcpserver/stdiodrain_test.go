package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStdioEndOfInputAnswersWhatWasAsked: a client that writes its
// requests and closes its input at once (a script piping into serve) gets
// an answer to each, not "canceled": the end of input waits for them. A
// request that is refused or unknown counts as answered too.
func TestStdioEndOfInputAnswersWhatWasAsked(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, os.WriteFile(filepath.Join(f.ws, "big.txt"), bytes.Repeat([]byte("line of text\n"), 20000), 0o644))
	var in strings.Builder
	in.WriteString(stdioHandshake)
	const calls = 12
	for i := 1; i <= calls; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"grep_files","arguments":{"path":".","pattern":"text"}}}`+"\n", i)
	}
	in.WriteString(`{"jsonrpc":"2.0","id":"s\u0031","method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"read_file","arguments":{"path":"big.txt"}}}`) // no final newline

	answers := pipeStdio(t, f.server(t), in.String())
	ids := slices.Sorted(maps.Keys(answers))
	require.Len(t, ids, calls+3, "one answer per request, got %v", ids)
	for id, lines := range answers {
		for _, line := range lines {
			require.NotContains(t, line, "canceled", "request %s was cancelled by the end of input", id)
		}
	}
	require.Contains(t, answers[`"s1"`][0], `"error"`)
	require.Contains(t, answers[`"last"`][0], "line of text")
}

// stdioHandshake is what a client sends first: initialize (id 0), then
// notifications/initialized.
const stdioHandshake = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

// pipeStdio serves in, written all at once with the input then closed, and
// returns the lines written, by id.
func pipeStdio(t *testing.T, s stdioServer, in string) map[string][]string {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, s.ServeStdio(ctx, strings.NewReader(in), &out, os.Stderr))
	answers := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		answers[string(m.ID)] = append(answers[string(m.ID)], line)
	}
	return answers
}

// TestStdioEndOfInputDoesNotWaitOnTheClient: a call waiting for the human
// through the client (an elicitation) cannot be answered once the client's
// input has closed, so the server does not sit out the approval timeout:
// the call is cancelled and the server returns.
func TestStdioEndOfInputDoesNotWaitOnTheClient(t *testing.T) {
	f := newFixture(t)
	withApproval(f, 10*time.Minute)
	b := f.server(t)
	in := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"new.txt","content":"x"}}}` + "\n"
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // the approval timeout is 10 minutes
	defer cancel()
	require.NoError(t, b.ServeStdio(ctx, strings.NewReader(in), &out, os.Stderr))
	require.Contains(t, out.String(), `"method":"elicitation/create"`)
	require.Contains(t, out.String(), `"id":1,`, "the call is answered (cancelled)")
	require.NoFileExists(t, filepath.Join(f.ws, "new.txt"))
}
