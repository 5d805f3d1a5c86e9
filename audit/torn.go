package audit

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// OutcomeTornTail marks the line recording that a torn last line (a crash
// in the middle of a write) was moved aside.
const OutcomeTornTail Outcome = "torn_tail"

// tornSuffix names the file beside the log that keeps set-aside lines.
const tornSuffix = ".torn"

// setAside moves a torn last line to path.torn (appended), cuts the file
// back to the last whole line and records that in the chain, which goes
// on from there. Only the last line is set aside: a log whose line before
// it is no entry either is damaged, not torn, and is refused. The
// writer lock is held.
func (a *Log) setAside(t *tornTail) (*Entry, int64, error) {
	last, err := readLast(a.f, t.off)
	if err != nil {
		return nil, 0, fmt.Errorf("%v, and the line before it is no audit entry either: %v", t, err)
	}
	tornPath := a.path + tornSuffix
	if err := appendTorn(a.f, t, tornPath); err != nil {
		return nil, 0, fmt.Errorf("setting aside the torn last line: %w", err)
	}
	if err := a.f.Truncate(t.off); err != nil {
		return nil, 0, fmt.Errorf("cutting off the torn last line: %w", err)
	}
	a.opts.Log.Warn("audit log: torn last line set aside (a crash in the middle of a write?); the chain goes on",
		"file", a.path, "bytes", t.size-t.off, "reason", t.why, "kept_in", tornPath)
	note := Entry{Session: "-", Tool: "-", ArgsSHA256: "-", Rule: "audit.torn_tail", Outcome: OutcomeTornTail,
		TornBytes: t.size - t.off, TornFile: filepath.Base(tornPath)}
	if _, err := a.write(note, last, t.off); err != nil {
		return nil, 0, fmt.Errorf("recording the torn last line: %w", err)
	}
	return a.last, a.size, nil
}

// appendTorn copies the torn bytes to the .torn file, ending them with a
// newline, and fsyncs it before the audit file is cut.
func appendTorn(f *os.File, t *tornTail, tornPath string) error {
	out, err := os.OpenFile(tornPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	if _, err := io.Copy(out, io.NewSectionReader(f, t.off, t.size-t.off)); err != nil {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, t.size-1); err == nil && last[0] != '\n' {
		if _, err := out.Write([]byte("\n")); err != nil {
			return err
		}
	}
	return out.Sync()
}
