package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
// returned with its line.
func Verify(r io.Reader) (VerifyResult, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	res := VerifyResult{FirstSeq: 1, FirstPrev: genesis, LastHash: genesis}
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
