package main

import (
	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/audit/ship"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/tools/declared"
)

func newAuditCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Work with the audit log"}
	var anchors, requireSigned bool
	var configFile string
	var pubKeys []string
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
contradicts.

With --pubkey (repeatable: give every key the logs were signed with,
old ones too after a key rotation), every signed checkpoint line is
checked with the public key it names, offline: a forged or altered
checkpoint, or a line altered before a checkpoint and the chain rewritten,
fails. The lines after the last checkpoint are reported as UNSIGNED; that
is a warning (exit 0: a running server's newest lines are not signed yet)
unless --require-signed makes it a failure (exit 1).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := ship.VerifyOptions{PubKeys: pubKeys, RequireSigned: requireSigned}
			if anchors {
				opts.Anchors = func() (configs.Config, error) { return loadFile(configFile) }
			}
			return ship.Verify(cmd.Context(), cmd.OutOrStdout(), args, opts)
		},
	}
	verify.Flags().BoolVar(&anchors, "anchors", false, "also check each chain against its anchors in S3 (audit.anchor)")
	verify.Flags().StringVar(&configFile, "config", "", "config file naming audit.anchor and the S3 server (default ./toolwarden.yaml, then $XDG_CONFIG_HOME/toolwarden/config.yaml)")
	verify.Flags().StringArrayVar(&pubKeys, "pubkey", nil, "public key file (audit-signing.pub) to check the signed checkpoints with; repeat for keys of before a rotation")
	verify.Flags().BoolVar(&requireSigned, "require-signed", false, "fail (exit 1) when a line is not signed by a checkpoint (needs --pubkey)")
	cmd.AddCommand(verify, newAuditKeygenCmd())
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

func newAuditKeygenCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Write a key pair for signed audit checkpoints: audit-signing.key (0600) and audit-signing.pub (0644)",
		Long: `Write a new Ed25519 key pair for signing audit checkpoints into the current
directory, or --out DIR: audit-signing.key (PKCS#8 PEM, mode 0600), which
audit.signing_key_file names, and audit-signing.pub (PKIX PEM, mode 0644),
which ` + "`toolwarden audit verify --pubkey`" + ` checks signatures with. An existing file of
either name is never overwritten.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return ship.Keygen(cmd.OutOrStdout(), out)
		},
	}
	cmd.Flags().StringVar(&out, "out", ".", "directory to write the key pair into")
	return cmd
}
