package main

import (
	"os"

	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/mcpserver"
)

func newToolsCmd() *cobra.Command {
	f := &configFlags{}
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "Print, as JSON, exactly the tools a model sees under the effective config",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			mcpserver.OneShotGC()
			l, err := f.load(cmd)
			if err != nil {
				return err
			}
			// The digest goes to stderr, so stdout stays the JSON list.
			return mcpserver.PrintTools(cmd.Context(), l, os.Stdout, os.Stderr)
		},
	}
	f.register(cmd)
	return cmd
}
