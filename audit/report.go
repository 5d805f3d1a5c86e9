package audit

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ReportChains writes each chain as audit verify prints it, headed by its
// replica when there are several, and fails if any is broken.
func ReportChains(w io.Writer, chains []Chain) error {
	if len(chains) == 1 {
		if chains[0].Err != nil {
			return chains[0].Err
		}
		printChain(w, chains[0].ChainResult)
		return nil
	}
	broken := 0
	for _, c := range chains {
		fmt.Fprintf(w, "replica %s:\n", ReplicaName(c.Replica))
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

// ReplicaName names a chain's replica; logs written before replicas were
// named have none.
func ReplicaName(r string) string {
	if r == "" {
		return "(none named)"
	}
	return r
}

// ExpandPaths expands the directories among paths into their audit files
// (LogFiles); files stay as given.
func ExpandPaths(args []string) ([]string, error) {
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
		in, err := LogFiles(arg)
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
func printChain(w io.Writer, res ChainResult) {
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
	printSigning(w, res.Signing(), last.LastSeq)
}

// printSigning says what the checkpoints sign: nothing for a log without
// any when no key was given (as before signing existed).
func printSigning(w io.Writer, s Signing, lastSeq uint64) {
	switch {
	case !s.Checked && s.Checkpoints == 0:
		return
	case !s.Checked:
		fmt.Fprintf(w, "  %d signed checkpoints, signatures not checked (give --pubkey)\n", s.Checkpoints)
		return
	case s.Checkpoints == 0:
		fmt.Fprintf(w, "UNSIGNED: no checkpoint: none of the %d lines is signed (signing was off, or the checkpoints were removed and the chain rewritten)\n", s.Unsigned)
		return
	}
	fmt.Fprintf(w, "  signatures: %d checkpoints verified with key %s; the last, %s line %d (seq %d, %s, %s), signs every line before it\n",
		s.Checkpoints, strings.Join(s.KeyIDs, ", "), s.LastFile, s.Last.Line, s.Last.Seq, s.Last.Rule, s.Last.Time)
	if s.Unsigned > 0 {
		fmt.Fprintf(w, "UNSIGNED: %d lines after the last checkpoint (seq %d-%d): no signature covers them (the server is still running or crashed)\n",
			s.Unsigned, s.FirstUnsigned, lastSeq)
		return
	}
	if s.Last.Rule != CheckpointShutdown {
		fmt.Fprintf(w, "  note: the log ends in a checkpoint written at %s, not at shutdown: the server is still running or crashed, or lines after that checkpoint were cut\n",
			strings.TrimPrefix(s.Last.Rule, "audit.checkpoint."))
	}
}

// Unsigned counts the lines of the chains that no checkpoint signs (for
// audit verify --require-signed); a broken chain counts none.
func Unsigned(chains []Chain) int {
	n := 0
	for _, c := range chains {
		if c.Err == nil && len(c.Files) > 0 {
			n += c.Signing().Unsigned
		}
	}
	return n
}

// base is the file name of a path, as rotation lines name files.
func base(p string) string { return filepath.Base(p) }
