package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

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
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
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

// TokenEnv is the environment variable holding the HTTP bearer token.
const TokenEnv = "TOOLWARDEN_HTTP_TOKEN"

// ResolveToken returns the bearer token: from TOOLWARDEN_HTTP_TOKEN, else
// from tokenFile, else a new random one (generated reports true).
func ResolveToken(tokenFile string) (token string, generated bool, err error) {
	if t := strings.TrimSpace(os.Getenv(TokenEnv)); t != "" {
		return t, false, checkToken(t, TokenEnv)
	}
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return "", false, fmt.Errorf("http.token_file: %w", err)
		}
		t := strings.TrimSpace(string(b))
		return t, false, checkToken(t, tokenFile)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", false, err
	}
	return hex.EncodeToString(b[:]), true, nil
}

func checkToken(t, src string) error {
	if len(t) < 16 {
		return fmt.Errorf("%s: the bearer token must be at least 16 characters", src)
	}
	return nil
}
