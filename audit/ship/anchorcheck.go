package ship

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/toolwarden/toolwarden/audit"
)

// AnchorReport is a chain checked against its anchors.
type AnchorReport struct {
	// Dir is where the anchors were looked for (s3://bucket/prefix...).
	Dir string
	// Checked anchors agree with the files; Before are older than the
	// oldest file given (rotated away), so not checked.
	Checked, Before int
	// Contradicted are the anchors the files do not agree with.
	Contradicted []Contradiction
}

// Contradiction is an anchor the files deny: its line is gone (the file
// was cut after it was anchored) or holds another hash (rewritten).
type Contradiction struct {
	Anchor  Anchor
	Key     string
	Problem string
}

// CheckAnchors reads the anchors of the chain's replica and log and checks
// each against the files: an anchored line must be there with the
// anchored hash.
func CheckAnchors(ctx context.Context, client *minio.Client, bucket, prefix string, c audit.Chain) (AnchorReport, error) {
	if c.Replica == "" {
		return AnchorReport{}, fmt.Errorf("the files name no replica (written before replica IDs); anchors are kept per replica")
	}
	newest := c.Files[len(c.Files)-1]
	dir := anchorDir(prefix, c.Replica, audit.LogName(newest.Path))
	rep := AnchorReport{Dir: "s3://" + bucket + "/" + dir}
	anchors, err := listAnchors(ctx, client, bucket, dir)
	if err != nil {
		return rep, err
	}
	first, last := c.Files[0].FirstSeq, newest.LastSeq
	if newest.Lines == 0 {
		last = first - 1
	}
	want := map[uint64]bool{}
	for _, a := range anchors {
		if a.Seq >= first && a.Seq <= last {
			want[a.Seq] = true
		}
	}
	var paths []string
	for _, f := range c.Files {
		paths = append(paths, f.Path)
	}
	hashes, err := audit.HashesAt(paths, want)
	if err != nil {
		return rep, err
	}
	for _, a := range anchors {
		switch {
		case a.Seq < first:
			rep.Before++
		case a.Seq > last:
			rep.Contradicted = append(rep.Contradicted, contradiction(ctx, client, bucket, a,
				fmt.Sprintf("the chain ends at seq %d, but seq %d (hash %s) was anchored: lines were cut from the end", last, a.Seq, a.Hash)))
		case hashes[a.Seq] != a.Hash:
			rep.Contradicted = append(rep.Contradicted, contradiction(ctx, client, bucket, a,
				fmt.Sprintf("seq %d has hash %s, but %s was anchored: the chain was rewritten", a.Seq, hashes[a.Seq], a.Hash)))
		default:
			rep.Checked++
		}
	}
	return rep, nil
}

// listedAnchor is an anchor as its key names it.
type listedAnchor struct {
	Key  string
	Seq  uint64
	Hash string
}

// listAnchors lists the anchors under dir, read from their keys.
func listAnchors(ctx context.Context, client *minio.Client, bucket, dir string) ([]listedAnchor, error) {
	var out []listedAnchor
	for obj := range client.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: dir, Recursive: true}) {
		if obj.Err != nil {
			return nil, fmt.Errorf("listing the anchors in s3://%s/%s: %w", bucket, dir, obj.Err)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(obj.Key, dir), ".json")
		seq, hash, ok := strings.Cut(name, "-")
		n, err := strconv.ParseUint(seq, 10, 64)
		if !ok || err != nil || len(hash) != 64 {
			return nil, fmt.Errorf("s3://%s/%s: not an anchor's name (<seq>-<hash>.json)", bucket, obj.Key)
		}
		out = append(out, listedAnchor{Key: obj.Key, Seq: n, Hash: hash})
	}
	return out, nil
}

// contradiction reads the anchor's record, for its times, into the
// report; a record that cannot be read still names the key.
func contradiction(ctx context.Context, client *minio.Client, bucket string, a listedAnchor, problem string) Contradiction {
	c := Contradiction{Key: "s3://" + bucket + "/" + a.Key, Problem: problem, Anchor: Anchor{Seq: a.Seq, Hash: a.Hash}}
	obj, err := client.GetObject(ctx, bucket, a.Key, minio.GetObjectOptions{})
	if err != nil {
		return c
	}
	defer obj.Close()
	if b, err := io.ReadAll(io.LimitReader(obj, 4096)); err == nil {
		_ = json.Unmarshal(b, &c.Anchor)
	}
	c.Anchor.Seq, c.Anchor.Hash = a.Seq, a.Hash // the key is what was checked
	return c
}
