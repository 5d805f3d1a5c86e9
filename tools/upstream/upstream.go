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
	"slices"
	"sync"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/upstream/pin"
)

// Toolset is the Meta.Toolset of every upstream tool.
const Toolset = "upstream"

// Conn is one connected upstream and the tools it offers. A command
// upstream whose process ends is started again with backoff (restart.go);
// meanwhile its calls get backend.unavailable.
type Conn struct {
	cfg    configs.Upstream
	opts   Options
	dial   dialer
	listMu sync.Mutex
	// Server names the upstream as it introduced itself at start.
	Server mcp.Implementation
	tools  []tools.Tool
	// listing is the upstream's tools as it last listed them, pinned:
	// the raw definitions and their digests (package pin).
	listing pin.Upstream
	// Withheld are the upstream's tools that are not offered, each with
	// the reason.
	Withheld []Withheld

	mu sync.Mutex // guards the fields below and listing
	// cur is the live session, nil during an outage.
	cur    *session
	server mcp.Implementation
	down   *Outage
	closed bool
	// stop ends the restart loop at Close.
	stop    chan struct{}
	changed []func()
	lists   []func(mcp.MCPMethod) // OnListChanged (resources.go)
	events  []func(Event)
	backoff backoff
}

// Withheld is an upstream tool that is not offered, and why.
type Withheld struct {
	Tool   string `json:"tool" yaml:"tool"`
	Reason string `json:"reason" yaml:"reason"`
}

// Env is how Connect reads toolwarden's environment (os.Getenv).
type Env func(string) string

// Options are what Connect needs besides the upstream's config.
type Options struct {
	// Getenv reads toolwarden's environment (os.Getenv).
	Getenv Env
	// Secret reads an env entry's or header's file or Vault secret
	// (configs.SecretSources.Secret; without it, files only).
	Secret func(context.Context, configs.SecretRef) (string, error)
	// Version is toolwarden's, sent in initialize.
	Version string
	Log     *slog.Logger
	// Sandbox starts a sandboxed command upstream; nil refuses one.
	Sandbox sandbox.Starter
	// Workspace is mounted in a sandboxed upstream, read-only unless
	// WorkspaceWritable (exec.workspace_writable).
	Workspace         string
	WorkspaceWritable bool
	// Limits bound a sandboxed upstream's process (exec.limits).
	Limits sandbox.Limits
	// Network is a sandboxed upstream's way out; nil means none.
	Network *sandbox.Network
	// NetworkEnv is added to a sandboxed upstream's environment with
	// Network: the placeholders its brokered credentials stand for.
	NetworkEnv []string
}

// Connect starts or reaches u, initializes the session and lists its
// tools, within u's connect timeout. The process of a command upstream
// lives until Close, whatever ctx does, and is restarted when it ends.
func Connect(ctx context.Context, u configs.Upstream, opts Options) (*Conn, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	d, err := newDialer(u, opts)
	if err != nil {
		return nil, fmt.Errorf("upstream %q: %w", u.Name, err)
	}
	return connectWith(ctx, u, d, opts)
}

// connect is Connect over the transport t, for tests: no restart.
func connect(ctx context.Context, u configs.Upstream, t transport.Interface, version string) (*Conn, error) {
	used := false
	d := func(context.Context) (*session, error) {
		if used {
			return nil, errors.New("the test transport cannot be dialled twice")
		}
		used = true
		return &session{t: t}, nil
	}
	return connectWith(ctx, u, d, Options{Version: version, Log: slog.New(slog.DiscardHandler)})
}

// connectWith opens the first session with d and reads the tools.
func connectWith(ctx context.Context, u configs.Upstream, d dialer, opts Options) (*Conn, error) {
	conn := &Conn{cfg: u, opts: opts, dial: d, stop: make(chan struct{}), backoff: newBackoff()}
	ctx, cancel := context.WithTimeout(ctx, u.Timeout())
	defer cancel()
	s, err := conn.open(ctx)
	if err != nil {
		return nil, fmt.Errorf("upstream %q: %w", u.Name, err)
	}
	conn.cur, conn.Server = s, conn.server
	list, err := conn.List(ctx)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("upstream %q: %w", u.Name, err)
	}
	conn.tools, conn.Withheld = conn.build(list)
	conn.watch(s)
	return conn, nil
}

// open dials a session and initializes it.
func (c *Conn) open(ctx context.Context) (*session, error) {
	s, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	t, rec := record(s.t)
	rec.refused = func(method string) { c.emit(Event{Kind: EventRequestRefused, Reason: method}) }
	s.rec = rec
	if s.cap != nil {
		s.cap.refused = func(e *MessageTooLargeError) {
			c.emit(Event{Kind: EventMessageRefused, Reason: e.Error(), TooLarge: true})
		}
	}
	s.client = client.NewClient(t)
	if err := s.client.Start(context.WithoutCancel(ctx)); err != nil {
		s.close()
		return nil, fmt.Errorf("start: %w", err)
	}
	s.client.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			go c.toolsChanged() // the transport's reader must not wait for a listing
		}
	})
	c.watchLists(s)
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "toolwarden", Version: c.opts.Version}
	res, err := s.client.Initialize(ctx, init)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("initialize: %w", s.explain(timeoutErr(ctx, err)))
	}
	if v := s.client.ProtocolVersion(); mcp.IsModernProtocol(v) {
		s.meta = map[string]any{mcp.MetaKeyProtocolVersion: v,
			mcp.MetaKeyClientCapabilities: s.client.GetClientCapabilities(),
			mcp.MetaKeyClientInfo:         init.Params.ClientInfo}
	}
	c.mu.Lock()
	c.server = res.ServerInfo
	c.mu.Unlock()
	return s, nil
}

// List lists the upstream's tools again and pins the listing: it returns
// what mcp-go decoded and sets Listing to the raw definitions. A listing
// that cannot be pinned (a tool listed twice, duplicate member names,
// invalid UTF-8) is refused: which of two readings would the upstream
// mean?
func (c *Conn) List(ctx context.Context) ([]mcp.Tool, error) {
	c.listMu.Lock() // one listing at a time: the recorder's pages are its own
	defer c.listMu.Unlock()
	s, out := c.session()
	if s == nil {
		return nil, fmt.Errorf("tools/list: %s", out.Error())
	}
	s.rec.take(mcp.MethodToolsList)
	ctx, note := withCapNote(ctx)
	list, err := s.client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return nil, fmt.Errorf("tools/list: %w", s.explain(cutOr(note, timeoutErr(ctx, err))))
	}
	raw, err := rawTools(s.rec.take(mcp.MethodToolsList))
	var pinned pin.Upstream
	if err == nil {
		c.mu.Lock()
		server := c.server
		c.mu.Unlock()
		pinned, err = pin.Listing(pin.Server{Name: server.Name, Version: server.Version}, raw)
	}
	if err != nil {
		return nil, fmt.Errorf("tools/list: its listing cannot be pinned: %w", err)
	}
	c.mu.Lock()
	c.listing = pinned
	c.mu.Unlock()
	return list.Tools, nil
}

// ServerInfo is how the upstream introduced itself in its latest
// session's initialize (after a restart, the new one's), as pins name it.
func (c *Conn) ServerInfo() pin.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return pin.Server{Name: c.server.Name, Version: c.server.Version}
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
// upstream says its tool list changed (notifications/tools/list_changed)
// and each time it was restarted. f should list again (List) and compare.
func (c *Conn) OnToolsChanged(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.changed = append(c.changed, f)
}

func (c *Conn) toolsChanged() {
	c.mu.Lock()
	fs := slices.Clone(c.changed)
	c.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// Tools returns the upstream's tools that are offered, as last listed.
func (c *Conn) Tools() []tools.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tools
}

// Relist lists the upstream's tools again (after a restart or its
// notifications/tools/list_changed) and builds them as Connect did: it
// returns the tools that can be offered and those withheld, and Listing,
// Tools and Withheld hold the new listing from then on.
func (c *Conn) Relist(ctx context.Context) ([]tools.Tool, []Withheld, error) {
	list, err := c.List(ctx)
	if err != nil {
		return nil, nil, err
	}
	offered, withheld := c.build(list)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tools, c.Withheld = offered, withheld
	return offered, withheld, nil
}

// Close ends the session and, for a command upstream, its process; no
// restart follows.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.stop)
	s := c.cur
	c.cur = nil
	c.mu.Unlock()
	if s != nil {
		return s.close()
	}
	return nil
}

// Environ is the whole environment a command upstream runs with: PATH (so
// that its program and interpreter are found) and the variables its env
// entries name, read now (each start reads a rotated file anew), nothing
// else of toolwarden's environment. A file or Vault secret that cannot be
// read is an error naming its key; an unset variable is left out.
func Environ(ctx context.Context, u configs.Upstream, opts Options) ([]string, error) {
	env := []string{"PATH=" + opts.getenv("PATH")}
	for _, e := range u.EnvRefs(fmt.Sprintf("upstreams %q", u.Name)) {
		v, err := opts.value(ctx, e.Ref)
		if err != nil {
			return nil, err
		}
		if v == "" {
			opts.log().Warn("upstream variable is unset; the upstream runs without it", "upstream", u.Name, "name", e.Name, "variable", e.Ref.Env)
			continue
		}
		env = append(env, e.Name+"="+v)
	}
	return env, nil
}

// value reads ref: its variable through Getenv, its file or Vault secret
// through Secret.
func (o Options) value(ctx context.Context, ref configs.SecretRef) (string, error) {
	if ref.File == "" && ref.Vault == "" {
		return o.getenv(ref.Env), nil
	}
	if o.Secret != nil {
		return o.Secret(ctx, ref)
	}
	return configs.SecretSources{}.Secret(ctx, ref)
}

func (o Options) getenv(name string) string {
	if o.Getenv == nil {
		return os.Getenv(name)
	}
	return o.Getenv(name)
}

func (o Options) log() *slog.Logger {
	if o.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Log
}
