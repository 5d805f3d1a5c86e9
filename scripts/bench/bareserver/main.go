// Command bareserver is the "no guard" baseline for MCP benchmarks: a bare
// mcp-go server exposing a single read_file tool that reads files below
// --root, with no policy, auditing or limits in front of it.
//
// It serves stdio by default, or streamable HTTP at /mcp with --http ADDR.
// All logging goes to stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Args is the read_file tool input.
type Args struct {
	Path string `json:"path" jsonschema:"file path relative to the server root"`
}

// Result is the read_file tool structured output.
type Result struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Size    int    `json:"size"`
}

func main() {
	log.SetOutput(os.Stderr)
	log.SetPrefix("bareserver: ")
	rootDir := flag.String("root", ".", "directory the read_file tool is confined to")
	httpAddr := flag.String("http", "", "serve streamable HTTP on ADDR (path /mcp) instead of stdio")
	flag.Parse()
	if err := run(*rootDir, *httpAddr); err != nil {
		log.Fatal(err)
	}
}

// run opens the root directory and serves until the transport stops.
func run(rootDir, httpAddr string) error {
	root, err := os.OpenRoot(rootDir)
	if err != nil {
		return fmt.Errorf("open root: %w", err)
	}
	defer func() { _ = root.Close() }()
	return serve(newServer(root), httpAddr)
}

// newServer builds the MCP server with its single read_file tool.
func newServer(root *os.Root) *server.MCPServer {
	s := server.NewMCPServer("bareserver", "0.1.0", server.WithToolCapabilities(false))
	tool := mcp.NewTool("read_file",
		mcp.WithDescription("Read a text file relative to the server root."),
		mcp.WithInputSchema[Args](),
		mcp.WithOutputSchema[Result](),
	)
	s.AddTool(tool, mcp.NewStructuredToolHandler(readFile(root)))
	return s
}

// readFile returns the read_file handler bound to root.
func readFile(root *os.Root) mcp.StructuredToolHandlerFunc[Args, Result] {
	return func(_ context.Context, _ mcp.CallToolRequest, args Args) (Result, error) {
		if args.Path == "" {
			return Result{}, errors.New("path is required")
		}
		data, err := root.ReadFile(args.Path)
		if err != nil {
			return Result{}, err
		}
		return Result{Path: args.Path, Content: string(data), Size: len(data)}, nil
	}
}

// serve runs the stdio transport, or streamable HTTP when addr is set.
func serve(s *server.MCPServer, addr string) error {
	if addr == "" {
		errLog := log.New(os.Stderr, "bareserver: ", log.LstdFlags)
		return server.ServeStdio(s, server.WithErrorLogger(errLog))
	}
	log.Printf("serving streamable HTTP on http://%s/mcp", addr)
	httpSrv := server.NewStreamableHTTPServer(s, server.WithEndpointPath("/mcp"))
	if err := httpSrv.Start(addr); err != nil {
		return fmt.Errorf("http: %w", err)
	}
	return nil
}
