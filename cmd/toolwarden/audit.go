package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/guard"
)

func newAuditCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Work with the audit log"}
	cmd.AddCommand(&cobra.Command{
		Use:   "verify FILE",
		Short: "Check an audit log's hash chain; fails on an edited, deleted or reordered line",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			res, err := guard.Verify(f)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			fmt.Printf("ok: %s: %d lines, hash chain intact, last hash %s\n", args[0], res.Lines, res.LastHash)
			return nil
		},
	})
	return cmd
}
