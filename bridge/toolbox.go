package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"

	"github.com/google/shlex"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Server says which MCP server the bridge drives: exactly one of
// InProcess, Command or URL.
type Server struct {
	InProcess *server.MCPServer
	Command   string // "CMD ARGS", split like a shell would, never run by one
	URL       string // streamable HTTP endpoint
	Token     string // bearer token for URL; never logged
	// HideEnv names more variables a Command server must not inherit
	// (those holding the API key or the Vault token, when the config
	// names them), besides the API key's and the token's own.
	HideEnv []string
	// Stderr receives a stdio server's log output.
	Stderr io.Writer
}

// Toolbox is an initialised MCP client and the tools its server lists.
type Toolbox struct {
	c      *client.Client
	tools  []mcp.Tool
	byName map[string]mcp.Tool
	// instructions are the server's, passed on to the model.
	instructions string
}

// Connect starts the MCP client for srv, declaring the elicitation
// capability through approver, and lists the server's tools.
func Connect(ctx context.Context, srv Server, approver client.ElicitationHandler) (*Toolbox, error) {
	c, err := newClient(srv, client.WithElicitationHandler(approver))
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("starting the MCP client: %w", err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "toolwarden-gemini", Version: "1"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("initialising the MCP session: %w", err)
	}
	tb := &Toolbox{c: c, byName: map[string]mcp.Tool{}, instructions: res.Instructions}
	if err := tb.refresh(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return tb, nil
}

func newClient(srv Server, opts ...client.ClientOption) (*client.Client, error) {
	switch {
	case srv.InProcess != nil:
		return client.NewInProcessClientWithOptions(srv.InProcess, opts...)
	case srv.Command != "":
		argv, err := shlex.Split(srv.Command)
		if err != nil || len(argv) == 0 {
			return nil, fmt.Errorf("--server-cmd %q: cannot split into a command and arguments", srv.Command)
		}
		// The command gets exactly serverEnv: mcp-go's default appends the
		// given variables to the whole environment, keys included.
		topts := []transport.StdioOption{transport.WithCommandFunc(serverCommand)}
		if srv.Stderr != nil {
			topts = append(topts, transport.WithCommandStderrWriter(srv.Stderr))
		}
		t := transport.NewStdioWithOptions(argv[0], serverEnv(os.Environ(), srv.HideEnv), argv[1:], topts...)
		return client.NewClient(t, opts...), nil
	case srv.URL != "":
		if srv.Token != "" {
			if err := checkCredentialURL("--server-url", srv.URL); err != nil {
				return nil, err
			}
		}
		hopts := []transport.StreamableHTTPCOption{transport.WithHTTPBasicClient(noRedirectClient())}
		if srv.Token != "" {
			hopts = append(hopts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + srv.Token}))
		}
		t, err := transport.NewStreamableHTTP(srv.URL, hopts...)
		if err != nil {
			return nil, err
		}
		return client.NewClient(t, opts...), nil
	}
	return nil, errors.New("no MCP server given")
}

// noRedirectClient is the HTTP client of a --server-url server. mcp-go's
// default client follows a 3xx to any host and scheme with the bearer
// token and headers attached (GO-2026-6911, no fixed release yet); an MCP
// endpoint has no reason to redirect, so the bridge refuses to follow.
func noRedirectClient() *http.Client {
	return &http.Client{CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		return fmt.Errorf("the MCP server redirected to %s://%s: --server-url redirects are not followed (the bearer token would go along); give the final URL", req.URL.Scheme, req.URL.Host)
	}}
}

// secretEnv are variables a tool server never needs: the model's API key
// stays with the bridge, and so does the bearer token for a --server-url
// server.
var secretEnv = []string{"GEMINI_API_KEY=", "GOOGLE_API_KEY=", "TOOLWARDEN_SERVER_TOKEN="}

// serverCommand builds the stdio server's process with env as its whole
// environment, in a process group of its own: the Ctrl-C a terminal sends
// to its foreground group is the bridge's to handle (it cancels a turn),
// and must not end the server the session goes on with.
func serverCommand(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, command, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, nil
}

// serverEnv is the environment of a stdio server: ours without the keys
// and the variables hide names.
func serverEnv(env, hide []string) []string {
	prefixes := slices.Clone(secretEnv)
	for _, name := range hide {
		prefixes = append(prefixes, name+"=")
	}
	out := make([]string, 0, len(env))
next:
	for _, kv := range env {
		for _, p := range prefixes {
			if strings.HasPrefix(kv, p) {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

func (tb *Toolbox) refresh(ctx context.Context) error {
	var all []mcp.Tool
	req := mcp.ListToolsRequest{}
	for {
		res, err := tb.c.ListTools(ctx, req)
		if err != nil {
			return fmt.Errorf("listing tools: %w", err)
		}
		all = append(all, res.Tools...)
		if res.NextCursor == "" {
			break
		}
		req.Params.Cursor = res.NextCursor
	}
	tb.tools = all
	clear(tb.byName)
	for _, t := range all {
		tb.byName[t.Name] = t
	}
	return nil
}

// Tools returns the tools the server lists.
func (tb *Toolbox) Tools() []mcp.Tool { return tb.tools }

// ReadOnly reports whether the server marks the named tool read-only.
func (tb *Toolbox) ReadOnly(name string) bool {
	t, ok := tb.byName[name]
	return ok && t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint
}

// Call calls a tool. Every call goes to the server, listed or not, so the
// server's guard decides and audits it.
func (tb *Toolbox) Call(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	if args == nil {
		args = map[string]any{} // "arguments": {} rather than null
	}
	req.Params.Arguments = args
	return tb.c.CallTool(ctx, req)
}

// Instructions returns the server's instructions, prefixed for the
// system prompt, or "".
func (tb *Toolbox) Instructions() string {
	if tb.instructions == "" {
		return ""
	}
	return "\n\nThe tool server says: " + tb.instructions
}

// Close ends the session (and a stdio server's process).
func (tb *Toolbox) Close() error { return tb.c.Close() }
