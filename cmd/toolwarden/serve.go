package main

import (
	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/mcpserver"
)

func newServeCmd() *cobra.Command {
	f := &configFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve MCP over stdio, or over streamable HTTP (/mcp) and SSE (/sse) with --http",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := f.load(cmd)
			if err != nil {
				return err
			}
			page, _ := cmd.Flags().GetBool("approval-page")
			return mcpserver.Serve(cmd.Context(), l, mcpserver.ServeOptions{ApprovalPage: page})
		},
	}
	f.register(cmd)
	cmd.Flags().String("http", "", "listen address for HTTP, e.g. 127.0.0.1:8080 (default: stdio)")
	cmd.Flags().Bool("approval-page", false, "add the local approval page to approval.channel (after the configured channels); its URL is printed to stderr once")
	return cmd
}
