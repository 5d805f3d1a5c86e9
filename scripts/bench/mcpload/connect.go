package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// connect creates the transport selected by cfg, starts it and initializes
// the MCP session.
func connect(ctx context.Context, cfg config) (*client.Client, error) {
	tr, err := newTransport(cfg)
	if err != nil {
		return nil, err
	}
	c := client.NewClient(tr, cfg.clientOptions()...)
	// Start must get the long-lived context: the stdio transport spawns the
	// child with exec.CommandContext, so cancelling it kills the server.
	if err := c.Start(ctx); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("start transport: %w", err)
	}
	initCtx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	var req mcp.InitializeRequest
	req.Params.ProtocolVersion = cfg.protocol
	req.Params.ClientInfo = mcp.Implementation{Name: "mcpload", Version: "0.1.0"}
	if _, err := c.Initialize(initCtx, req); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// newTransport returns an unstarted stdio or streamable-HTTP transport.
func newTransport(cfg config) (transport.Interface, error) {
	if cfg.url != "" {
		return newHTTPTransport(cfg)
	}
	fields := strings.Fields(cfg.cmd)
	var opts []transport.StdioOption
	if cfg.childStderr {
		opts = append(opts, transport.WithCommandStderrWriter(os.Stderr))
	}
	return transport.NewStdioWithOptions(fields[0], cfg.env, fields[1:], opts...), nil
}

// newHTTPTransport builds a streamable-HTTP transport whose connection pool
// is sized for the configured concurrency, so that workers do not churn
// TCP connections.
func newHTTPTransport(cfg config) (transport.Interface, error) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConns = cfg.concurrency + 4
	base.MaxIdleConnsPerHost = cfg.concurrency + 4
	hc := &http.Client{Transport: base, Timeout: cfg.timeout}
	opts := []transport.StreamableHTTPCOption{transport.WithHTTPBasicClient(hc)}
	if cfg.token != "" {
		opts = append(opts, transport.WithHTTPHeaders(map[string]string{
			"Authorization": "Bearer " + cfg.token,
		}))
	}
	return transport.NewStreamableHTTP(cfg.url, opts...)
}
