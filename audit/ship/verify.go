package ship

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
)

// VerifyOptions are what audit verify checks beyond the hash chains.
type VerifyOptions struct {
	// Anchors, if set (audit verify --anchors), loads the config that
	// says where the anchors are (audit.anchor, artifacts).
	Anchors func() (configs.Config, error)
	// PubKeys are the public key files (audit verify --pubkey) every
	// checkpoint's signature is checked with; none checks no signature.
	PubKeys []string
	// RequireSigned fails when a line is not signed by a checkpoint.
	RequireSigned bool
}

// Verify checks the hash chains of the audit files and directories in
// paths and writes what it found to w (audit.ReportChains); it fails on a
// broken chain. With public keys, every checkpoint's signature is checked
// too, and the lines after the last one are reported as unsigned (an
// error with RequireSigned). With Anchors set, each chain is then checked
// against its anchors in S3; the config is loaded only then.
func Verify(ctx context.Context, w io.Writer, paths []string, opts VerifyOptions) error {
	var keys audit.Keys
	if len(opts.PubKeys) > 0 {
		var err error
		if keys, err = audit.LoadPublicKeys(opts.PubKeys); err != nil {
			return fmt.Errorf("--pubkey: %w", err)
		}
	} else if opts.RequireSigned {
		return errors.New("--require-signed: give the public keys with --pubkey")
	}
	files, err := audit.ExpandPaths(paths)
	if err != nil {
		return err
	}
	chains := audit.VerifyChainsSigned(files, keys)
	if err := audit.ReportChains(w, chains); err != nil {
		return err
	}
	if n := audit.Unsigned(chains); opts.RequireSigned && n > 0 {
		return fmt.Errorf("--require-signed: %d lines are not signed by any checkpoint", n)
	}
	if opts.Anchors == nil {
		return nil
	}
	cfg, err := opts.Anchors()
	if err != nil {
		return err
	}
	return verifyAnchors(ctx, w, cfg, chains)
}

// verifyAnchors checks every chain against its anchors and writes what it
// found; any contradiction fails it.
func verifyAnchors(ctx context.Context, w io.Writer, cfg configs.Config, chains []audit.Chain) error {
	an := cfg.Audit.Anchor
	if an.Bucket == "" {
		return errors.New("--anchors: audit.anchor.bucket is not set in the config; it names where the anchors are")
	}
	client, err := NewS3Client(cfg.Artifacts)
	if err != nil {
		return err
	}
	contradicted := 0
	for _, c := range chains {
		rep, err := CheckAnchors(ctx, client, an.Bucket, an.Prefix, c)
		if err != nil {
			return fmt.Errorf("anchors of replica %s: %w", audit.ReplicaName(c.Replica), err)
		}
		fmt.Fprintf(w, "anchors %s: %d agree", rep.Dir, rep.Checked)
		if rep.Before > 0 {
			fmt.Fprintf(w, ", %d older than the oldest file given (not checked)", rep.Before)
		}
		fmt.Fprintln(w)
		for _, x := range rep.Contradicted {
			contradicted++
			fmt.Fprintf(w, "CONTRADICTED: %s (anchored at %s, line time %s): %s\n", x.Key, x.Anchor.AnchoredAt, x.Anchor.Time, x.Problem)
		}
	}
	if contradicted > 0 {
		return fmt.Errorf("the files contradict %d anchor(s): the log was cut or rewritten after they were written", contradicted)
	}
	return nil
}
