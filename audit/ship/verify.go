package ship

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
)

// Verify checks the hash chains of the audit files and directories in
// paths and writes what it found to w (audit.ReportChains); it fails on a
// broken chain. With loadConfig set (audit verify --anchors), each chain
// is then checked against its anchors in S3, where the config's
// audit.anchor and artifacts say; the config is loaded only then.
func Verify(ctx context.Context, w io.Writer, paths []string, loadConfig func() (configs.Config, error)) error {
	files, err := audit.ExpandPaths(paths)
	if err != nil {
		return err
	}
	chains := audit.VerifyChains(files)
	if err := audit.ReportChains(w, chains); err != nil || loadConfig == nil {
		return err
	}
	cfg, err := loadConfig()
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
