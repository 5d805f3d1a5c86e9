package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/toolwarden/toolwarden/guard"
)

func newAuditCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Work with the audit log"}
	cmd.AddCommand(&cobra.Command{
		Use:   "verify FILE|DIR...",
		Short: "Check audit logs' hash chains, across their rotated files; fails on an edited, deleted or reordered line or file",
		Long: `Check the hash chain of audit files. Given a directory, every audit file in it
(the log and the files it was rotated to; .torn files are listed, not chained);
given several files, they are ordered by their rotation links and each link is
checked. The files of several replicas (told apart by the replica their lines
name) are several chains, each checked and reported on its own. The report
names the files in chain order, the rotations, the line counts, and every
torn last line that was set aside after a crash.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := auditFiles(args)
			if err != nil {
				return err
			}
			return reportChains(cmd.OutOrStdout(), guard.VerifyChains(files))
		},
	})
	return cmd
}

// reportChains prints each chain, headed by its replica when there are
// several, and fails if any is broken.
func reportChains(w io.Writer, chains []guard.Chain) error {
	if len(chains) == 1 {
		if chains[0].Err != nil {
			return chains[0].Err
		}
		printChain(w, chains[0].ChainResult)
		return nil
	}
	broken := 0
	for _, c := range chains {
		fmt.Fprintf(w, "replica %s:\n", replicaName(c.Replica))
		if c.Err != nil {
			broken++
			fmt.Fprintf(w, "FAILED: %v\n", c.Err)
			continue
		}
		printChain(w, c.ChainResult)
	}
	if broken > 0 {
		return fmt.Errorf("%d of %d chains broken", broken, len(chains))
	}
	return nil
}

// replicaName names a chain's replica; logs written before replicas were
// named have none.
func replicaName(r string) string {
	if r == "" {
		return "(none named)"
	}
	return r
}

// auditFiles expands directories into their audit files.
func auditFiles(args []string) ([]string, error) {
	var files []string
	for _, arg := range args {
		fi, err := os.Stat(arg)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			files = append(files, arg)
			continue
		}
		in, err := guard.LogFiles(arg)
		if err != nil {
			return nil, err
		}
		files = append(files, in...)
	}
	return files, nil
}

// printChain says what was found: the summary line, then each file in
// chain order with its rotation, the torn lines set aside, and the .torn
// files.
func printChain(w io.Writer, res guard.ChainResult) {
	last := res.Files[len(res.Files)-1]
	lines := 0
	for _, f := range res.Files {
		lines += f.Lines
	}
	if len(res.Files) == 1 {
		fmt.Fprintf(w, "ok: %s: %d lines, hash chain intact, last hash %s\n", last.Path, last.Lines, last.LastHash)
	} else {
		fmt.Fprintf(w, "ok: %d files, %d lines, hash chain intact across %d rotations, last hash %s\n",
			len(res.Files), lines, len(res.Files)-1, last.LastHash)
	}
	for i, f := range res.Files {
		from := "starts the chain"
		switch {
		case i > 0:
			from = "rotated from " + base(res.Files[i-1].Path)
		case f.PrevFile != "":
			from = fmt.Sprintf("continues %s, which is not here (removed by audit.keep, or not given): the chain before seq %d is not checked", f.PrevFile, f.FirstSeq)
		}
		if f.Lines == 0 {
			fmt.Fprintf(w, "  %s: empty\n", f.Path)
		} else {
			fmt.Fprintf(w, "  %s: %d lines, seq %d-%d, %s\n", f.Path, f.Lines, f.FirstSeq, f.LastSeq, from)
		}
		for _, t := range f.Torn {
			fmt.Fprintf(w, "  %s line %d (seq %d): a torn last line of %d bytes (a crash in the middle of a write) was set aside into %s; the chain goes on\n",
				f.Path, t.Line, t.Seq, t.Bytes, t.File)
		}
	}
	for _, t := range res.TornFiles {
		fmt.Fprintf(w, "  %s: %d bytes of set-aside torn lines, outside the chain\n", t.Path, t.Bytes)
	}
}

// base is the file name of a path, as rotation lines name files.
func base(p string) string { return filepath.Base(p) }
