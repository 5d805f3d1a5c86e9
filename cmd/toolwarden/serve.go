package main

import (
	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/mcpserver"
)

func newServeCmd() *cobra.Command {
	f := &configFlags{serveFlags: true, logsWarnings: true}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve MCP over stdio, or over streamable HTTP (/mcp) and SSE (/sse) with --http",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := f.load(cmd)
			if err != nil {
				return err
			}
			return mcpserver.Serve(cmd.Context(), l)
		},
	}
	f.register(cmd)
	return cmd
}
