// Package upstream offers the tools of another MCP server (an upstream)
// behind toolwarden's guard. It connects to the upstream as an MCP client
// (mcp-go's), lists its tools and turns each into a tools.Tool named
// <upstream>__<tool> whose handler forwards tools/call and returns the
// upstream's result unchanged: the guard, not this package, filters it.
//
// The guard metadata comes from toolwarden's rules, not the upstream's
// claims: every tool needs the capability mcp:call:<upstream>/<tool> and
// asks for approval unless the upstream annotates it read-only; its
// inputSchema is what the guard validates arguments against before the
// upstream sees them.
package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/upstream/pin"
)

// Toolset is the Meta.Toolset of every upstream tool.
const Toolset = "upstream"

// Conn is one connected upstream and the tools it offers.
type Conn struct {
	cfg    configs.Upstream
	client *client.Client
	listMu sync.Mutex
	// Server names the upstream as it introduced itself.
	Server mcp.Implementation
	tools  []tools.Tool
	// rec keeps the raw tools/list results (see recorder).
	rec *recorder
	// listing is the upstream's tools as it last listed them, pinned:
	// the raw definitions and their digests (package pin).
	listing pin.Upstream
	mu      sync.Mutex // guards listing
	// Withheld are the upstream's tools that are not offered, each with
	// the reason.
	Withheld []Withheld
}

// Withheld is an upstream tool that is not offered, and why.
type Withheld struct {
	Tool   string `json:"tool" yaml:"tool"`
	Reason string `json:"reason" yaml:"reason"`
}

// Env is how Connect reads toolwarden's environment (os.Getenv).
type Env func(string) string

// Connect starts or reaches u, initializes the session and lists its
// tools, within u's connect timeout. The process of a command upstream
// lives until Close, whatever ctx does.
func Connect(ctx context.Context, u configs.Upstream, getenv Env, version string, log *slog.Logger) (*Conn, error) {
	t, err := newTransport(u, getenv, log)
	if err != nil {
		return nil, err
	}
	return connect(ctx, u, t, version)
}

// connect is Connect over the transport t.
func connect(ctx context.Context, u configs.Upstream, t transport.Interface, version string) (*Conn, error) {
	t, rec := record(t)
	c := client.NewClient(t)
	if err := c.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, fmt.Errorf("upstream %q: start: %w", u.Name, err)
	}
	conn := &Conn{cfg: u, client: c, rec: rec}
	ctx, cancel := context.WithTimeout(ctx, u.Timeout())
	defer cancel()
	if err := conn.handshake(ctx, version); err != nil {
		c.Close()
		return nil, fmt.Errorf("upstream %q: %w", u.Name, err)
	}
	return conn, nil
}

func (c *Conn) handshake(ctx context.Context, version string) error {
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "toolwarden", Version: version}
	res, err := c.client.Initialize(ctx, init)
	if err != nil {
		return fmt.Errorf("initialize: %w", timeoutErr(ctx, err))
	}
	c.Server = res.ServerInfo
	list, err := c.List(ctx)
	if err != nil {
		return err
	}
	c.tools, c.Withheld = c.build(list)
	return nil
}

// List lists the upstream's tools again and pins the listing: it returns
// what mcp-go decoded and sets Listing to the raw definitions. A listing
// that cannot be pinned (a tool listed twice, duplicate member names,
// invalid UTF-8) is refused: which of two readings would the upstream
// mean?
func (c *Conn) List(ctx context.Context) ([]mcp.Tool, error) {
	c.listMu.Lock() // one listing at a time: the recorder's pages are its own
	defer c.listMu.Unlock()
	c.rec.take()
	list, err := c.client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return nil, fmt.Errorf("tools/list: %w", timeoutErr(ctx, err))
	}
	raw, err := rawTools(c.rec.take())
	var pinned pin.Upstream
	if err == nil {
		pinned, err = pin.Listing(pin.Server{Name: c.Server.Name, Version: c.Server.Version}, raw)
	}
	if err != nil {
		return nil, fmt.Errorf("tools/list: its listing cannot be pinned: %w", err)
	}
	c.mu.Lock()
	c.listing = pinned
	c.mu.Unlock()
	return list.Tools, nil
}

// Listing is the upstream's last listing, pinned: its raw definitions and
// their digests.
func (c *Conn) Listing() pin.Upstream {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.listing
}

func timeoutErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("no answer within the connect timeout: %w", errors.Join(ctx.Err(), err))
	}
	return err
}

// OnToolsChanged calls f, on a goroutine of its own, each time the
// upstream says its tool list changed (notifications/tools/list_changed).
// f should list again (List) and compare.
func (c *Conn) OnToolsChanged(f func()) {
	c.client.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			go f() // the transport's reader must not wait for a listing
		}
	})
}

// Tools returns the upstream's tools that are offered.
func (c *Conn) Tools() []tools.Tool { return c.tools }

// Close ends the session and, for a command upstream, its process.
func (c *Conn) Close() error { return c.client.Close() }

// newTransport builds the stdio or streamable HTTP transport of u.
func newTransport(u configs.Upstream, getenv Env, log *slog.Logger) (transport.Interface, error) {
	if u.URL != "" {
		headers := map[string]string{}
		for h, v := range u.HeadersEnv {
			if headers[h] = getenv(v); headers[h] == "" {
				log.Warn("upstream header variable is unset; the header is sent empty", "upstream", u.Name, "header", h, "variable", v)
			}
		}
		return transport.NewStreamableHTTP(u.URL, transport.WithHTTPHeaders(headers))
	}
	env := Environ(u, getenv, log)
	return transport.NewStdioWithOptions(u.Command[0], env, u.Command[1:],
		transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = env // only these: never toolwarden's own environment
			cmd.Dir = os.TempDir()
			return cmd, nil
		}), transport.WithCommandLogger(log)), nil
}

// Environ is the whole environment a command upstream runs with: PATH (so
// that its program and interpreter are found) and the variables its env
// entries name, nothing else of toolwarden's environment.
func Environ(u configs.Upstream, getenv Env, log *slog.Logger) []string {
	env := []string{"PATH=" + getenv("PATH")}
	for _, e := range u.EnvNames() {
		v := getenv(e[1])
		if v == "" {
			log.Warn("upstream variable is unset; the upstream runs without it", "upstream", u.Name, "name", e[0], "variable", e[1])
			continue
		}
		env = append(env, e[0]+"="+v)
	}
	return env
}
