package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// FileResult is one verified file of a chain.
type FileResult struct {
	Path string
	VerifyResult
}

// ChainResult is a chain verified across rotated files.
type ChainResult struct {
	// Files are in chain order, oldest first.
	Files []FileResult
	// Missing is the file the oldest one was rotated from, when it was not
	// given (audit.keep removed it, or it was left out).
	Missing string
	// TornFiles are the .torn files beside the verified ones, holding the
	// torn lines set aside; they are outside the chain.
	TornFiles []TornFile
}

// TornFile is a file of set-aside torn lines.
type TornFile struct {
	Path  string
	Bytes int64
}

// VerifyFiles verifies each file, orders them by their rotation links
// (each file's first line names the file before it) and checks every link:
// the first line of a file chains to the last hash of the one before and
// goes on with its sequence. Files that do not form one chain are refused.
func VerifyFiles(paths []string) (ChainResult, error) {
	files, err := verifyEach(paths)
	if err != nil {
		return ChainResult{}, err
	}
	return chainOf(files)
}

// Chain is one chain of VerifyChains: its result, or the problem that
// broke it.
type Chain struct {
	Replica string
	ChainResult
	Err error
}

// VerifyChains verifies the files of several logs, each replica's its own
// chain: files are grouped by the replica their first line names (files of
// one replica, or of logs written before replicas were named, must form
// one chain, as for VerifyFiles), and each group is verified on its own,
// so that one broken log does not hide the state of the others.
func VerifyChains(paths []string) []Chain {
	return VerifyChainsSigned(paths, nil)
}

// VerifyChainsSigned is VerifyChains that also checks every checkpoint's
// signature with keys, unless keys is nil.
func VerifyChainsSigned(paths []string, keys Keys) []Chain {
	var groups [][]FileResult
	var errs []error
	index := map[string]int{}
	for _, p := range paths {
		res, err := verifyFile(p, keys) // a broken file's replica is its first line's, if that was read
		i, ok := index[res.Replica]
		if !ok {
			i = len(groups)
			index[res.Replica] = i
			groups, errs = append(groups, nil), append(errs, nil)
		}
		groups[i] = append(groups[i], FileResult{Path: p, VerifyResult: res})
		if err != nil && errs[i] == nil {
			errs[i] = fmt.Errorf("%s: %w", p, err)
		}
	}
	out := make([]Chain, len(groups))
	for i, g := range groups {
		out[i] = Chain{Replica: g[0].Replica, Err: errs[i]}
		if errs[i] == nil {
			out[i].ChainResult, out[i].Err = chainOf(g)
		}
		if out[i].Files == nil {
			out[i].Files = g // for the report: which files the broken chain holds
		}
	}
	return out
}

// verifyEach verifies every file on its own.
func verifyEach(paths []string) ([]FileResult, error) {
	out := make([]FileResult, 0, len(paths))
	for _, p := range paths {
		res, err := verifyFile(p, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, FileResult{Path: p, VerifyResult: res})
	}
	return out, nil
}

// chainOf orders verified files into one chain and checks its links.
func chainOf(files []FileResult) (ChainResult, error) {
	byName := map[string]FileResult{}
	var paths []string
	for _, f := range files {
		name := filepath.Base(f.Path)
		if _, dup := byName[name]; dup {
			return ChainResult{}, fmt.Errorf("two files are named %s; a chain links files by name", name)
		}
		byName[name] = f
		paths = append(paths, f.Path)
	}
	order, err := chainOrder(byName)
	if err != nil {
		return ChainResult{}, err
	}
	out := ChainResult{Files: order, TornFiles: tornFiles(paths)}
	if prev := order[0].PrevFile; prev != "" {
		out.Missing = prev
	}
	for i := 1; i < len(order); i++ {
		if err := checkLink(order[i-1], order[i]); err != nil {
			return out, err
		}
	}
	return out, nil
}

func verifyFile(path string, keys Keys) (VerifyResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return VerifyResult{}, err
	}
	defer f.Close()
	return VerifySigned(f, keys)
}

// chainOrder finds the newest file (no other names it as its previous
// file) and walks back through the PrevFile links.
func chainOrder(byName map[string]FileResult) ([]FileResult, error) {
	named := map[string]bool{}
	for _, r := range byName {
		named[r.PrevFile] = true
	}
	var heads []string
	for name := range byName {
		if !named[name] {
			heads = append(heads, name)
		}
	}
	slices.Sort(heads)
	if len(heads) != 1 {
		return nil, fmt.Errorf("the files do not form one chain: %s each end one (a file between them is missing, or they are different logs)",
			strings.Join(heads, ", "))
	}
	var order []FileResult
	for name := heads[0]; name != ""; {
		r, ok := byName[name]
		if !ok {
			break
		}
		order = append(order, r)
		delete(byName, name)
		name = r.PrevFile
	}
	if len(byName) > 0 {
		var left []string
		for name := range byName {
			left = append(left, name)
		}
		slices.Sort(left)
		return nil, fmt.Errorf("%s: not linked into the chain ending in %s", strings.Join(left, ", "), heads[0])
	}
	slices.Reverse(order)
	return order, nil
}

// Signing is what a chain's checkpoints sign.
type Signing struct {
	// Checkpoints counts them; Last is the newest, in LastFile.
	Checkpoints int
	Last        CheckpointRecord
	LastFile    string
	// Unsigned counts the lines after the last checkpoint, from seq
	// FirstUnsigned (every line of the chain when there is none).
	Unsigned      int
	FirstUnsigned uint64
	KeyIDs        []string
	// Checked says whether the signatures were verified.
	Checked bool
}

// Signing sums up the chain's checkpoints in chain order: every line up to
// the last checkpoint is signed by it (the chain links them), the lines
// after it are not.
func (c ChainResult) Signing() Signing {
	var s Signing
	for i, f := range c.Files {
		s.Checked = f.SignaturesChecked
		for _, k := range f.KeyIDs {
			if !slices.Contains(s.KeyIDs, k) {
				s.KeyIDs = append(s.KeyIDs, k)
			}
		}
		if f.Checkpoints == 0 {
			if s.Unsigned == 0 && f.Lines > 0 {
				s.FirstUnsigned = f.FirstSeq
			}
			s.Unsigned += f.Lines
			continue
		}
		s.Checkpoints += f.Checkpoints
		s.Last, s.LastFile, s.Unsigned = f.LastCheckpoint, c.Files[i].Path, f.Unsigned
		s.FirstUnsigned = f.LastCheckpoint.Seq + 1
	}
	return s
}

// checkLink checks that next continues prev.
func checkLink(prev, next FileResult) error {
	switch {
	case next.FirstPrev != prev.LastHash:
		return fmt.Errorf("%s: line 1: chain broken: prev does not match the last hash of %s (it was edited or cut after the rotation)",
			next.Path, filepath.Base(prev.Path))
	case next.FirstSeq != prev.LastSeq+1:
		return fmt.Errorf("%s: line 1: sequence number is %d, want %d after the last line of %s",
			next.Path, next.FirstSeq, prev.LastSeq+1, filepath.Base(prev.Path))
	}
	return nil
}

// tornFiles lists the .torn files of the given files.
func tornFiles(paths []string) []TornFile {
	var out []TornFile
	for _, p := range paths {
		if fi, err := os.Stat(p + tornSuffix); err == nil && fi.Mode().IsRegular() {
			out = append(out, TornFile{Path: p + tornSuffix, Bytes: fi.Size()})
		}
	}
	return out
}

// LogFiles lists the audit files in dir: every regular file but the .torn
// files, the half-made files of a crashed rotation and hidden files.
func LogFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") || strings.HasSuffix(name, tornSuffix) ||
			strings.Contains(name, rotateTmp) {
			continue
		}
		out = append(out, filepath.Join(dir, name))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no audit files in it", dir)
	}
	return out, nil
}
