package audit

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// VerifyResult summarises one verified audit file.
type VerifyResult struct {
	Lines             int
	FirstSeq, LastSeq uint64
	// FirstPrev is the Prev the first line chains to: genesis, or, when
	// PrevFile is set, the last hash of the file this one was rotated from.
	FirstPrev string
	PrevFile  string
	LastHash  string
	// Torn lists the lines recording a torn last line set aside.
	Torn []TornRecord
	// Replica is the replica the first line names ("" before replicas
	// were written), by which VerifyChains groups files.
	Replica string
	// Checkpoints counts the checkpoint lines, LastCheckpoint is the
	// newest, and Unsigned counts the lines after it (every line when
	// there is none). KeyIDs are the keys the checkpoints name, and
	// SignaturesChecked says whether their signatures were verified
	// (public keys were given).
	Checkpoints       int
	LastCheckpoint    CheckpointRecord
	Unsigned          int
	KeyIDs            []string
	SignaturesChecked bool
}

// CheckpointRecord is a checkpoint line: where it is and why it was written.
type CheckpointRecord struct {
	Line  int
	Seq   uint64
	Rule  string
	KeyID string
	Time  string
}

// TornRecord is a line recording that a torn last line was set aside.
type TornRecord struct {
	Line  int
	Seq   uint64
	Bytes int64
	File  string
}

// Verify reads a log file and checks every line's hash, its link to the
// line before and its sequence number. The first line either starts the
// chain (sequence 1 after the genesis hash) or continues a rotated file
// (its PrevFile); VerifyFiles checks that link. The first problem is
// returned with its line. Checkpoint lines are chained like any other;
// their signatures are checked by VerifySigned.
func Verify(r io.Reader) (VerifyResult, error) {
	return VerifySigned(r, nil)
}

// VerifySigned is Verify that also checks every checkpoint's signature
// with keys (by the key ID the checkpoint names), unless keys is nil.
func VerifySigned(r io.Reader, keys Keys) (VerifyResult, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	res := VerifyResult{FirstSeq: 1, FirstPrev: genesis, LastHash: genesis, SignaturesChecked: keys != nil}
	for n := 1; sc.Scan(); n++ {
		e, err := decodeLine(sc.Bytes())
		if err != nil {
			return res, fmt.Errorf("line %d: not an audit entry: %v", n, err)
		}
		if n == 1 {
			res.Replica = e.Replica
		}
		if n == 1 && e.Outcome == OutcomeRotated {
			res.FirstSeq, res.FirstPrev, res.LastHash, res.PrevFile = e.Seq, e.Prev, e.Prev, e.PrevFile
		}
		if err := res.check(n, e); err != nil {
			return res, err
		}
		if err := res.checkSigned(n, &e, keys); err != nil {
			return res, err
		}
		if e.Outcome == OutcomeTornTail {
			res.Torn = append(res.Torn, TornRecord{Line: n, Seq: e.Seq, Bytes: e.TornBytes, File: e.TornFile})
		}
		res.Lines, res.LastSeq, res.LastHash = n, e.Seq, e.Hash
	}
	return res, sc.Err()
}

// check checks line n against the lines before it.
func (res *VerifyResult) check(n int, e Entry) error {
	want := res.FirstSeq + uint64(n-1)
	switch {
	case e.Seq != want:
		return fmt.Errorf("line %d: sequence number is %d, want %d (a line was deleted, inserted or moved)", n, e.Seq, want)
	case e.Prev != res.LastHash:
		return fmt.Errorf("line %d: chain broken: prev does not match the hash of line %d", n, n-1)
	case hashEntry(e) != e.Hash:
		return fmt.Errorf("line %d: hash mismatch (the line was edited)", n)
	case e.Outcome == OutcomeRotated && (n > 1 || e.PrevFile == ""):
		return fmt.Errorf("line %d: a rotation line must be a file's first line and name the previous file", n)
	}
	return nil
}

// decodeLine parses one line strictly: no unknown field, nothing after
// the entry (bytes outside the hash could carry anything unnoticed).
func decodeLine(line []byte) (Entry, error) {
	var e Entry
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return e, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return e, errors.New("data after the entry")
	}
	return e, nil
}

// keyIDForm is what KeyID writes; checkpointRules are the reasons a
// checkpoint is written. Anything else in a line is refused before it
// reaches the report.
var (
	keyIDForm       = regexp.MustCompile(`^[0-9a-f]{16}$`)
	checkpointRules = []string{CheckpointLines, CheckpointInterval, CheckpointRotation, CheckpointShutdown}
)

// checkSigned checks a checkpoint line's signature with keys (when given)
// and counts the lines it signs; only a checkpoint line may carry one.
func (res *VerifyResult) checkSigned(n int, e *Entry, keys Keys) error {
	if e.Outcome != OutcomeCheckpoint {
		if e.Signature != "" || e.KeyID != "" {
			return fmt.Errorf("line %d: a %s line carries a signature; only checkpoint lines are signed", n, e.Outcome)
		}
		res.Unsigned++
		return nil
	}
	if e.Signature == "" || e.KeyID == "" {
		return fmt.Errorf("line %d: checkpoint without a signature or key ID", n)
	}
	if !keyIDForm.MatchString(e.KeyID) {
		return fmt.Errorf("line %d: checkpoint key_id %q is not a key ID (16 hex digits)", n, e.KeyID)
	}
	if !slices.Contains(checkpointRules, e.Rule) {
		return fmt.Errorf("line %d: checkpoint rule %q is none of %s", n, e.Rule, strings.Join(checkpointRules, ", "))
	}
	if keys != nil {
		if err := verifyCheckpoint(e, keys); err != nil {
			return fmt.Errorf("line %d (seq %d): %w", n, e.Seq, err)
		}
	}
	res.Checkpoints++
	res.LastCheckpoint = CheckpointRecord{Line: n, Seq: e.Seq, Rule: e.Rule, KeyID: e.KeyID, Time: e.Time}
	res.Unsigned = 0
	if !slices.Contains(res.KeyIDs, e.KeyID) {
		res.KeyIDs = append(res.KeyIDs, e.KeyID)
	}
	return nil
}

// verifyCheckpoint checks e's signature with the key it names.
func verifyCheckpoint(e *Entry, keys Keys) error {
	pub, ok := keys[e.KeyID]
	if !ok {
		return fmt.Errorf("checkpoint signed by key %s, which no --pubkey names (give the public key it was signed with; keep old keys after a rotation)", e.KeyID)
	}
	sig, err := base64.StdEncoding.DecodeString(e.Signature)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("checkpoint signature is not a base64 Ed25519 signature")
	}
	if !ed25519.Verify(pub, checkpointMessage(e), sig) {
		return fmt.Errorf("checkpoint signature does not verify with key %s: the checkpoint was forged or altered, or a line before it was altered and the chain rewritten", e.KeyID)
	}
	return nil
}
