package mcpserver

import (
	"context"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// ListTools returns exactly what a client's tools/list would, through an
// in-process client.
func (s *Server) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	c, err := s.localClient(ctx, "toolwarden-tools")
	if err != nil {
		return nil, err
	}
	defer c.Close()
	res, err := c.ListTools(context.WithValue(ctx, ownListing{}, true), mcp.ListToolsRequest{})
	if err != nil {
		return nil, err
	}
	return res.Tools, nil
}

// localClient is an initialized in-process client of the server, named
// name: what the operator's commands (tools, call) talk to it through.
func (s *Server) localClient(ctx context.Context, name string) (*client.Client, error) {
	c, err := client.NewInProcessClient(s.mcp)
	if err != nil {
		return nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	if err := c.Start(ctx); err != nil {
		c.Close()
		return nil, err
	}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
