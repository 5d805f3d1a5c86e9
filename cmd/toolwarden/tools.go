package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/mcpserver"
)

func newToolsCmd() *cobra.Command {
	f := &configFlags{}
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "Print, as JSON, exactly the tools a model sees under the effective config",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := f.load(cmd)
			if err != nil {
				return err
			}
			b, err := mcpserver.Build(cmd.Context(), oneShot(l.Config), audit.Discard{}, version, newLogger(l.Config.Log.Level))
			if err != nil {
				return err
			}
			defer b.Close()
			list, err := b.ListTools(cmd.Context())
			if err != nil {
				return err
			}
			// The digest goes to stderr, so stdout stays the JSON list.
			if digest, err := mcpserver.ToolsDigest(list); err == nil {
				fmt.Fprintln(os.Stderr, "tools_sha256:", digest)
			}
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(list)
		},
	}
	f.register(cmd)
	return cmd
}
