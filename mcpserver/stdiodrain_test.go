package mcpserver_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

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
