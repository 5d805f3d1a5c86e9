package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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
	Seq      uint64 `json:"seq"`
	Time     string `json:"time"`
	Session  string `json:"session"`
	Identity string `json:"identity,omitempty"` // keys limits, see Call.Identity
	Trusted  bool   `json:"trusted,omitempty"`  // an operator call (toolwarden call --trusted)
	// Replica names the server replica that wrote the line
	// (Options.Replica), so that the files of a fleet tell apart.
	Replica    string  `json:"replica,omitempty"`
	Tool       string  `json:"tool"`
	ArgsSHA256 string  `json:"args_sha256"`
	Rule       string  `json:"rule"`
	Outcome    Outcome `json:"outcome"`
	Code       string  `json:"code,omitempty"`
	DurationMS float64 `json:"duration_ms"`
	Prev       string  `json:"prev"`
	Hash       string  `json:"hash"`

	// DroppedArgs names the client control arguments (such as Gemini
	// CLI's wait_for_previous) removed before validation; ArgsSHA256 is
	// the digest of the arguments without them, those the tool received.
	DroppedArgs []string `json:"dropped_args,omitempty"`
	// Approval names the approval request a call belongs to: its
	// needs_approval line, and the approved or declined line and the end
	// of the call, even when they come in a later request (the retry of a
	// 2026-07-28 client), carry the same value.
	Approval string `json:"approval,omitempty"`
	// DecidedBy says, on an approved or declined line, who answered on
	// which channel: "elicit" (the client's form), "page", "socket
	// uid=1000", "webhook".
	DecidedBy string `json:"decided_by,omitempty"`
	// Redactions counts the secrets the output filter removed from the result.
	Redactions int `json:"redactions,omitempty"`
	// ToolsSHA256 is, on a start line, the digest of the advertised tool
	// surface (names, descriptions, schemas, annotations).
	ToolsSHA256 string `json:"tools_sha256,omitempty"`
	// Version is, on a start line, the server's build: version, commit
	// and date as toolwarden --version prints them.
	Version string `json:"version,omitempty"`
	// PrevFile is, on the first line of a rotated-to file, the name the
	// previous file was renamed to; Prev is that file's last hash.
	PrevFile string `json:"prev_file,omitempty"`
	// TornBytes and TornFile are, on a torn-tail line, how many bytes of
	// a half-written last line were moved aside, and where to.
	TornBytes int64  `json:"torn_bytes,omitempty"`
	TornFile  string `json:"torn_file,omitempty"`
	// KeyID and Signature are, on a checkpoint line, the signing key's ID
	// (KeyID) and the base64 Ed25519 signature of the chain head the line
	// chains to (see checkpointMessage).
	KeyID     string `json:"key_id,omitempty"`
	Signature string `json:"signature,omitempty"`
	// DefinitionSHA256 is, on the lines of an upstream tool's call, the
	// digest of the definition it runs under (its pin); on a drift line,
	// the digest of the definition the upstream now lists.
	DefinitionSHA256 string `json:"definition_sha256,omitempty"`
	// PinnedSHA256 is, on a drift line, the digest the tool was pinned
	// with ("" for a tool that was not pinned).
	PinnedSHA256 string `json:"pinned_sha256,omitempty"`
	// Cost and RunCost are, on a spend line of the gemini bridge (Tool
	// the model), what one model request cost and the run so far, as
	// "0.0025 USD"; InputTokens and OutputTokens its usage (thoughts
	// counted as output).
	Cost         string `json:"cost,omitempty"`
	RunCost      string `json:"run_cost,omitempty"`
	InputTokens  int64  `json:"input_tokens,omitempty"`
	OutputTokens int64  `json:"output_tokens,omitempty"`
	// Call links the lines of one call: on a server with an egress proxy,
	// a call's decision and end lines and the egress lines of its
	// sandbox's connections carry the same ID.
	Call string `json:"call,omitempty"`
	// Host and Port are, on an egress line, the host:port the sandbox
	// asked the proxy for; Addr the address dialled (empty when refused
	// before dialling); BytesUp and BytesDown what went each way; and
	// CredentialInjected whether the proxy put a brokered credential
	// into a request (never the value).
	Host               string `json:"host,omitempty"`
	Port               int    `json:"port,omitempty"`
	Addr               string `json:"addr,omitempty"`
	BytesUp            int64  `json:"bytes_up,omitempty"`
	BytesDown          int64  `json:"bytes_down,omitempty"`
	CredentialInjected bool   `json:"credential_injected,omitempty"`
	// ArgFindings are, on the lines of a call, what scanning its free-text
	// arguments found and what was done ("content: secret aws-access-token
	// (refuse, arguments.secrets)"): names of rules and arguments, never
	// a value.
	ArgFindings []string `json:"arg_findings,omitempty"`
	// Capabilities are, on the line of an ended call, the capabilities it
	// used: its tool's, with templates filled from its arguments
	// (fs:write:notes/a.md).
	Capabilities []string `json:"capabilities,omitempty"`
	// Spent is, on the line of an ended call, what it counted against the
	// limits.
	Spent *Spend `json:"spent,omitempty"`
}

// Spend is what one call counted against its identity's limits: one call,
// its arguments' bytes in, its result's bytes out, and its cost in
// limits.budget units.
type Spend struct {
	Calls    int64 `json:"calls"`
	BytesIn  int64 `json:"bytes_in"`
	BytesOut int64 `json:"bytes_out"`
	Budget   int64 `json:"budget"`
}

// The outcomes of egress lines: one connection of a sandbox through the
// egress proxy, let through (ended normally or cut by the rule a line
// names) or refused by the rule it names.
const (
	OutcomeEgressAllowed Outcome = "egress_allowed"
	OutcomeEgressDenied  Outcome = "egress_denied"
)

// OutcomeSpend is a line recording a model request's spend.
const OutcomeSpend Outcome = "spend"

// Outcome is what a line records: the guard's decision, how an allowed
// call ended, or what the log itself did (OutcomeRotated, OutcomeTornTail).
type Outcome string

// genesis is the Prev of the first line.
const genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// SyncMode is when the audit file is fsynced. Every line is written with
// write(2) before its call goes on whatever the mode, so a killed server
// loses nothing it acknowledged; fsync adds surviving a machine crash.
type SyncMode string

// The sync modes (configs.Audit.Sync).
const (
	// SyncAlways fsyncs before the call goes on; concurrent calls share one fsync.
	SyncAlways SyncMode = "always"
	// SyncInterval fsyncs at most every second, at rotation and at Close.
	SyncInterval SyncMode = "interval"
	// SyncNone leaves flushing to the kernel.
	SyncNone SyncMode = "none"
)

// Options configure an Log. The zero value syncs every second
// and never rotates.
type Options struct {
	Sync SyncMode
	// SyncInterval is the interval of SyncInterval (default one second).
	SyncInterval time.Duration
	// MaxBytes and MaxAge rotate the file once it is that large or its
	// first line that old (0 is off). Keep is how many rotated files are
	// kept (0 keeps all).
	MaxBytes int64
	MaxAge   time.Duration
	Keep     int
	// Log receives the warnings (a torn line set aside, a pruning that
	// failed); nil is slog.Default().
	Log *slog.Logger
	// Replica is written into every line (Entry.Replica).
	Replica string
	// Ship, if set, receives every line once it is written.
	Ship Shipper
	// Signer, if set, signs a checkpoint line every CheckpointLines lines
	// this process writes, every CheckpointInterval while lines are
	// unsigned, before a rotation and at Close (see checkpoint.go).
	Signer             *Signer
	CheckpointLines    int
	CheckpointInterval time.Duration
}

// Shipper sends audit lines elsewhere (package audit/ship). Ship is called
// with the log's lock held, once the line is in the file: it must not
// block, and must copy line, whose buffer is reused.
type Shipper interface {
	Ship(line []byte, seq uint64, hash string)
}

// Log appends hash-chained entries to a file. Several processes may
// share one file: an append holds the writer lock (see writerLock),
// follows a rotation another process made, and reads the tail if another
// process wrote.
type Log struct {
	mu   sync.Mutex
	path string
	opts Options
	now  func() time.Time
	lk   *writerLock
	// swap guards f against a fsync running outside mu: f is replaced
	// (rotation) under both mu and swap.
	swap sync.RWMutex
	f    *os.File
	fd   int
	st   syscall.Stat_t
	enc  lineEncoder
	head Entry
	// active is when this process last appended, checked when its open
	// file was last compared with path (see hold); poll watches the lock.
	active, checked time.Time
	poll            *time.Timer
	fresh           bool
	// last is the newest entry and size the file size after it, so that an
	// append re-reads the tail only when another process wrote meanwhile;
	// born is the time of the file's first line (for MaxAge).
	last   *Entry
	size   int64
	born   time.Time
	sync   *syncer
	closed bool
	// unsigned counts the lines this process wrote since the last
	// checkpoint it knows of; stopTicks stops the interval checkpoints.
	unsigned  int
	stopTicks chan struct{}
}

// Open opens (creating, mode 0600) the audit file at path with the
// default options.
func Open(path string) (*Log, error) {
	return OpenWith(path, Options{})
}

// OpenWith opens (creating, mode 0600) the audit file at path. A
// torn last line, left by a crash in the middle of a write, is moved to
// path.torn and recorded in the chain, which then goes on.
func OpenWith(path string, opts Options) (*Log, error) {
	if opts.Sync == "" {
		opts.Sync = SyncInterval
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	lk, err := openWriterLock(path)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	f, err := openAuditFile(path)
	if err != nil {
		lk.close()
		return nil, fmt.Errorf("audit log: %w", err)
	}
	a := &Log{f: f, fd: int(f.Fd()), lk: lk, path: path, opts: opts, now: time.Now}
	a.sync = newSyncer(opts.Sync, opts.SyncInterval, a.fsync, opts.Log)
	if err := a.check(); err != nil {
		a.opts.Signer = nil // a log that cannot be opened gets no checkpoint either
		a.Close()
		return nil, fmt.Errorf("audit log %s: %v; run `toolwarden audit verify %s`", path, err, path)
	}
	a.startCheckpoints()
	return a, nil
}

func openAuditFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
}

// check reads the tail under the lock at open, setting a torn line aside,
// and removes what a rotation that crashed left behind.
func (a *Log) check() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.hold(time.Now()); err != nil {
		return err
	}
	removeStaleRotations(a.path)
	_, _, err := a.lastEntry()
	return err
}

// Path returns the audit file's path.
func (a *Log) Path() string { return a.path }

// Close fsyncs (unless the mode is none) and closes the file.
func (a *Log) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	cpErr := a.closeCheckpoint()
	if cpErr != nil {
		cpErr = fmt.Errorf("audit log: shutdown checkpoint: %w", cpErr)
	}
	a.closed = true
	a.sync.stop()
	if a.poll != nil {
		a.poll.Stop()
	}
	a.swap.Lock()
	defer a.swap.Unlock()
	var err error
	if a.opts.Sync != SyncNone {
		if err = a.f.Sync(); err == nil {
			a.sync.markSynced()
		}
	}
	return errors.Join(cpErr, err, a.f.Close(), a.lk.close())
}

// Append chains e to the log and writes it, rotating first when the file is
// due. Seq, Time, Prev and Hash are set here. It returns once the line is
// written, and with SyncAlways once it is on stable storage.
func (a *Log) Append(e Entry) error {
	n, err := a.append(e)
	if err != nil {
		return err
	}
	if a.opts.Sync == SyncAlways {
		return a.sync.wait(n)
	}
	return nil
}

func (a *Log) append(e Entry) (uint64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return 0, os.ErrClosed
	}
	now := time.Now()
	if err := a.hold(now); err != nil {
		return 0, err
	}
	a.active = now
	a.armPoll() // pushed back: this append looks for a waiter itself
	for {
		last, size, err := a.lastEntry()
		if err != nil {
			return 0, fmt.Errorf("audit log tail: %w", err)
		}
		if !a.rotationDue(last, size) {
			n, err := a.write(e, last, size)
			if err == nil {
				n = max(n, a.afterWrite())
			}
			if a.lk.wanted() {
				a.lk.release()
			}
			return n, err
		}
		if a.opts.Signer != nil && last.Outcome != OutcomeCheckpoint {
			if _, err := a.write(checkpointEntry(CheckpointRotation), last, size); err != nil {
				return 0, fmt.Errorf("audit log checkpoint before rotation: %w", err)
			}
			last = a.last
		}
		if err := a.rotate(last); err != nil {
			return 0, fmt.Errorf("audit log rotation: %w", err)
		}
	}
}

// write chains e to last and writes it at size, the end of the file; the
// writer lock is held. A failed write (a full disk) is cut off again, so that
// the file keeps ending in a whole line and the next append succeeds once
// there is room. It returns the write's number for the syncer.
func (a *Log) write(e Entry, last *Entry, size int64) (uint64, error) {
	e.Seq, e.Prev = 1, genesis
	if last != nil {
		e.Seq, e.Prev = last.Seq+1, last.Hash
	}
	e.Time = a.now().UTC().Format(time.RFC3339Nano)
	if a.opts.Replica != "" {
		e.Replica = a.opts.Replica
	}
	if e.Outcome == OutcomeCheckpoint && a.opts.Signer != nil {
		a.opts.Signer.sign(&e)
	}
	line, err := a.enc.line(&e)
	if err != nil {
		return 0, err
	}
	n, err := a.f.Write(line)
	if err != nil {
		a.last, a.fresh = nil, false
		if n > 0 {
			err = errors.Join(err, a.cutPartial(n))
		}
		return 0, err
	}
	if last == nil {
		a.born = a.now()
	}
	// The newest entry is kept in a.head rather than a new allocation;
	// whoever holds the previous a.last has used it by now.
	a.head = e
	a.last, a.size = &a.head, size+int64(n)
	a.unsigned++
	if e.Outcome == OutcomeCheckpoint {
		a.unsigned = 0
	}
	if a.opts.Ship != nil {
		a.opts.Ship.Ship(line, e.Seq, e.Hash)
	}
	return a.sync.wrote(), nil
}

// cutPartial cuts off the n bytes a failed write left at the end of the
// file (measured, not taken from memory: a foreign writer may have
// appended meanwhile).
func (a *Log) cutPartial(n int) error {
	if err := syscall.Fstat(a.fd, &a.st); err != nil {
		return err
	}
	return a.f.Truncate(int64(a.st.Size) - int64(n))
}

// hashEntry is SHA-256 over the entry's JSON with Hash empty.
func hashEntry(e Entry) string {
	e.Hash = ""
	b, _ := json.Marshal(e)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// hashedLine sets e.Hash (as hashEntry would) and returns e's JSON line,
// encoding e once: the hash goes into the hash-less encoding it was taken
// over.
func hashedLine(e *Entry) ([]byte, error) {
	var enc lineEncoder
	line, err := enc.line(e)
	return append([]byte(nil), line...), err
}

// lineEncoder holds the buffers of hashedLine, reused from one line to
// the next under the log's mutex.
type lineEncoder struct{ bare, buf []byte }

// line sets e.Hash and returns e's JSON line, valid until the next call.
func (enc *lineEncoder) line(e *Entry) ([]byte, error) {
	e.Hash = ""
	var i int
	enc.bare, i = appendEntryAt(enc.bare[:0], e)
	sum := sha256.Sum256(enc.bare)
	line := append(enc.buf[:0], enc.bare[:i]...)
	line = hex.AppendEncode(line, sum[:])
	e.Hash = string(line[i:])
	line = append(append(line, enc.bare[i:]...), '\n')
	enc.buf = line
	return line, nil
}

// Discard is an Auditor that records nothing, for commands that only list
// tools and never run one.
type Discard struct{}

// Append does nothing.
func (Discard) Append(Entry) error { return nil }
