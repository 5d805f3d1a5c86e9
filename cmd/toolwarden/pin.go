package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/mcpserver"
)

func newPinCmd() *cobra.Command {
	f := &configFlags{}
	var out string
	var check bool
	cmd := &cobra.Command{
		Use:   "pin",
		Short: "Pin every upstream's tool definitions to toolwarden.pins.json, or --check them",
		Long: `Connect to every upstream of the config, list its tools and write the digest of
each definition (every field, RFC 8785, SHA-256, with the server's name and
version) to toolwarden.pins.json beside the config file (or --out). Nothing is
written unless every upstream answers.

--check writes nothing: it compares the listings with the pins file, prints
each difference per tool and field, and exits 1 when there is any (for CI),
0 when every definition is as pinned, 2 when the check could not be made
(an upstream unreachable, the pins file unreadable).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := f.load(cmd)
			if err != nil {
				return err
			}
			if !check {
				return mcpserver.Pin(cmd.Context(), l, out, os.Stdout)
			}
			err = mcpserver.CheckPins(cmd.Context(), l, out, os.Stdout)
			if errors.Is(err, mcpserver.ErrPinsDiffer) {
				return &exitError{code: 1, msg: err.Error() + "; review the diff above, then run toolwarden pin"}
			}
			if err != nil {
				// Not a difference: CI tells a broken check from drift.
				return &exitError{code: 2, msg: err.Error()}
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&out, "out", "", "pins file to write or --check against (default: toolwarden.pins.json beside the config file)")
	cmd.Flags().BoolVar(&check, "check", false, "compare with the pins file and exit 1 on any difference; write nothing")
	return cmd
}
