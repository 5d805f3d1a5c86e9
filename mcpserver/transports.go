package mcpserver

import (
	"context"
	"io"
	"os"

	"github.com/toolwarden/toolwarden/mcpserver/stdio"
)

// The server's side of its transports (packages stdio and httpserve):
// each is handed the mcp-go server, and the names callers knew here are
// kept as forwards.

// ServeStdio serves MCP on in/out until in closes or ctx is done (see
// stdio.Serve). Logs go to errOut; out carries only protocol messages.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out, errOut io.Writer) error {
	return stdio.Serve(ctx, s.mcp, in, out, errOut)
}

// MaxStdioLineBytes bounds one JSON-RPC message on stdio.
const MaxStdioLineBytes = stdio.MaxLineBytes

// PollableInput returns standard input f ready to be read through Go's
// poller, and what sets it back (see stdio.PollableInput).
func PollableInput(f *os.File) (in *os.File, restore func()) { return stdio.PollableInput(f) }
