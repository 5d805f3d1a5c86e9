package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Head is the newest line of a chain as one process knows it: what an
// anchor records (package audit/ship).
type Head struct {
	// File is the log's name (its base name; rotated files are named
	// after it).
	File string
	Seq  uint64
	Hash string
	// Time is the line's time.
	Time string
}

// Head returns the newest line this process wrote or read, false before
// any. With several processes on one file it may be an older line: still
// a true statement of the chain.
func (a *Log) Head() (Head, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.last == nil {
		return Head{}, false
	}
	return Head{File: filepath.Base(a.path), Seq: a.last.Seq, Hash: a.last.Hash, Time: a.last.Time}, true
}

// LogName is the name of the log a file belongs to: its base name without
// a rotation's time suffix.
func LogName(path string) string {
	base := filepath.Base(path)
	if i := len(base) - len(rotateStamp) - 1; i > 0 && rotatedSuffix.MatchString(base[i:]) {
		return base[:i]
	}
	return base
}

// HashesAt returns the hash of each line whose seq want holds, reading
// the files (of a verified chain).
func HashesAt(paths []string, want map[uint64]bool) (map[uint64]string, error) {
	out := map[uint64]string{}
	for _, p := range paths {
		if err := hashesIn(p, want, out); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return out, nil
}

func hashesIn(path string, want map[uint64]bool, out map[uint64]string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		var e struct {
			Seq  uint64 `json:"seq"`
			Hash string `json:"hash"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return err
		}
		if want[e.Seq] {
			out[e.Seq] = e.Hash
		}
	}
	return sc.Err()
}
