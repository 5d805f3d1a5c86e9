package main

import (
	"os"

	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/mcpserver"
)

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Inspect configuration"}
	f := &configFlags{serveFlags: true}
	check := &cobra.Command{
		Use:   "check",
		Short: "Validate a config and print the effective policy, or fail naming file, key and reason",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			mcpserver.OneShotGC()
			l, err := f.load(cmd)
			if err != nil {
				return err
			}
			return mcpserver.CheckConfig(cmd.Context(), l, os.Stdout)
		},
	}
	f.register(check)
	cmd.AddCommand(check)
	return cmd
}
