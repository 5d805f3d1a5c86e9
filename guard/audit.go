package guard

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Entry is one audit line. Hash covers every other field, Prev is the
// previous line's Hash, so editing, deleting or reordering lines breaks the
// chain. Raw arguments are never written, only their digest.
type Entry struct {
	Seq        uint64  `json:"seq"`
	Time       string  `json:"time"`
	Session    string  `json:"session"`
	Identity   string  `json:"identity,omitempty"` // keys limits, see Call.Identity
	Trusted    bool    `json:"trusted,omitempty"`  // an operator call (toolwarden call --trusted)
	Tool       string  `json:"tool"`
	ArgsSHA256 string  `json:"args_sha256"`
	Rule       string  `json:"rule"`
	Outcome    Outcome `json:"outcome"`
	Code       string  `json:"code,omitempty"`
	DurationMS float64 `json:"duration_ms"`
	Prev       string  `json:"prev"`
	Hash       string  `json:"hash"`

	// Redactions counts the secrets the output filter removed from the result.
	Redactions int `json:"redactions,omitempty"`
	// ToolsSHA256 is, on a start line, the digest of the advertised tool
	// surface (names, descriptions, schemas, annotations).
	ToolsSHA256 string `json:"tools_sha256,omitempty"`
}

// genesis is the Prev of the first line.
const genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// AuditLog appends hash-chained entries to a file. Several processes may
// share one file: each append takes an exclusive lock and reads the tail.
type AuditLog struct {
	mu   sync.Mutex
	f    *os.File
	path string
	now  func() time.Time
	// last is the newest entry and size the file size after it, so that an
	// append re-reads the tail only when another process wrote meanwhile.
	last *Entry
	size int64
}

// OpenAuditLog opens (creating, mode 0600) the audit file at path.
func OpenAuditLog(path string) (*AuditLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	a := &AuditLog{f: f, path: path, now: time.Now}
	if _, err := a.tail(); err != nil {
		f.Close()
		return nil, fmt.Errorf("audit log %s: last line is unreadable (%v); run `toolwarden audit verify %s`", path, err, path)
	}
	return a, nil
}

// Path returns the audit file's path.
func (a *AuditLog) Path() string { return a.path }

// Close closes the file.
func (a *AuditLog) Close() error { return a.f.Close() }

// Append chains e to the log and writes it. Seq, Time, Prev and Hash are set here.
func (a *AuditLog) Append(e Entry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := syscall.Flock(int(a.f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("audit log lock: %w", err)
	}
	defer syscall.Flock(int(a.f.Fd()), syscall.LOCK_UN)
	last, err := a.lastEntry()
	if err != nil {
		return fmt.Errorf("audit log tail: %w", err)
	}
	e.Seq, e.Prev = 1, genesis
	if last != nil {
		e.Seq, e.Prev = last.Seq+1, last.Hash
	}
	e.Time = a.now().UTC().Format(time.RFC3339Nano)
	e.Hash = hashEntry(e)
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	n, err := a.f.Write(append(line, '\n'))
	if err != nil {
		a.last = nil
		return err
	}
	a.last, a.size = &e, a.size+int64(n)
	return nil
}

// lastEntry returns the newest entry, from memory when the file has not
// grown since this process last wrote to it.
func (a *AuditLog) lastEntry() (*Entry, error) {
	fi, err := a.f.Stat()
	if err != nil {
		return nil, err
	}
	if a.last != nil && fi.Size() == a.size {
		return a.last, nil
	}
	last, err := a.tail()
	if err != nil {
		return nil, err
	}
	a.last, a.size = last, fi.Size()
	return last, nil
}

// tail returns the last entry, or nil for an empty file.
func (a *AuditLog) tail() (*Entry, error) {
	fi, err := a.f.Stat()
	if err != nil || fi.Size() == 0 {
		return nil, err
	}
	const window = 8192
	off := max(fi.Size()-window, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := a.f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	buf = bytes.TrimRight(buf, "\n")
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		buf = buf[i+1:]
	} else if off > 0 {
		return nil, errors.New("last line longer than 8 KiB")
	}
	var e Entry
	if err := json.Unmarshal(buf, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// hashEntry is SHA-256 over the entry's JSON with Hash empty.
func hashEntry(e Entry) string {
	e.Hash = ""
	b, _ := json.Marshal(e)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// VerifyResult summarises a verified log.
type VerifyResult struct {
	Lines    int
	LastHash string
}

// Verify reads a log and checks every line's hash, its link to the line
// before and its sequence number. The first problem is returned with its line.
func Verify(r io.Reader) (VerifyResult, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	res := VerifyResult{LastHash: genesis}
	for n := 1; sc.Scan(); n++ {
		var e Entry
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return res, fmt.Errorf("line %d: not an audit entry: %v", n, err)
		}
		// Bytes after the entry are outside the hash, so they could carry
		// anything unnoticed.
		if _, err := dec.Token(); err != io.EOF {
			return res, fmt.Errorf("line %d: not an audit entry: data after the entry", n)
		}
		switch {
		case e.Seq != uint64(n):
			return res, fmt.Errorf("line %d: sequence number is %d, want %d (a line was deleted, inserted or moved)", n, e.Seq, n)
		case e.Prev != res.LastHash:
			return res, fmt.Errorf("line %d: chain broken: prev does not match the hash of line %d", n, n-1)
		case hashEntry(e) != e.Hash:
			return res, fmt.Errorf("line %d: hash mismatch (the line was edited)", n)
		}
		res.Lines, res.LastHash = n, e.Hash
	}
	return res, sc.Err()
}

// ArgsDigest is the SHA-256 of the arguments' canonical JSON (object keys
// sorted, no insignificant space).
func ArgsDigest(args any) string {
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.Marshal(args)
	if err != nil {
		b = []byte(fmt.Sprintf("unencodable:%T", args))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Discard is an Auditor that records nothing, for commands that only list
// tools and never run one.
type Discard struct{}

// Append does nothing.
func (Discard) Append(Entry) error { return nil }
