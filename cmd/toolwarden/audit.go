package main

import (
	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/audit/ship"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/tools/declared"
)

func newAuditCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Work with the audit log"}
	var anchors bool
	var configFile string
	verify := &cobra.Command{
		Use:   "verify FILE|DIR...",
		Short: "Check audit logs' hash chains, across their rotated files; fails on an edited, deleted or reordered line or file",
		Long: `Check the hash chain of audit files. Given a directory, every audit file in it
(the log and the files it was rotated to; .torn files are listed, not chained);
given several files, they are ordered by their rotation links and each link is
checked. The files of several replicas (told apart by the replica their lines
name) are several chains, each checked and reported on its own. The report
names the files in chain order, the rotations, the line counts, and every
torn last line that was set aside after a crash.

With --anchors, each chain is also checked against the chain heads
anchored to S3 (audit.anchor, read from the config): a line that was
anchored must still be there with its hash, so cutting the last lines of a
file, or putting a forged chain in its place, is reported with the anchor it
contradicts.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var anchorConfig func() (configs.Config, error)
			if anchors {
				anchorConfig = func() (configs.Config, error) { return loadFile(configFile) }
			}
			return ship.Verify(cmd.Context(), cmd.OutOrStdout(), args, anchorConfig)
		},
	}
	verify.Flags().BoolVar(&anchors, "anchors", false, "also check each chain against its anchors in S3 (audit.anchor)")
	verify.Flags().StringVar(&configFile, "config", "", "config file naming audit.anchor and the S3 server (default ./toolwarden.yaml, then $XDG_CONFIG_HOME/toolwarden/config.yaml)")
	cmd.AddCommand(verify)
	return cmd
}

// loadFile reads the config file (or the default one) without flags, as
// audit verify --anchors does to learn where the anchors are.
func loadFile(file string) (configs.Config, error) {
	l, err := configs.Load(configs.Options{File: file, CheckTool: declared.Check})
	if err != nil {
		return configs.Config{}, err
	}
	return l.Config, nil
}
