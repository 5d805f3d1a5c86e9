package audit

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"time"
)

// Signed checkpoints. The hash chain proves order and completeness to
// whoever holds the files; a checkpoint proves that the chain came from
// a holder of the signing key. A checkpoint is itself a chained line
// (outcome checkpoint) whose Prev is the chain head it signs: the
// signature covers that head, so every line before it, and the line's
// seq (the chain's line count), time, replica, reason and key ID. One
// signature covers many lines: a call pays for a signature at most once
// every CheckpointLines lines, never each time.

// OutcomeCheckpoint marks a signed checkpoint line.
const OutcomeCheckpoint Outcome = "checkpoint"

// The reasons a checkpoint is written, its line's rule.
const (
	CheckpointLines    = "audit.checkpoint.lines"
	CheckpointInterval = "audit.checkpoint.interval"
	CheckpointRotation = "audit.checkpoint.rotation"
	CheckpointShutdown = "audit.checkpoint.shutdown"
)

// checkpointDomain starts every signed message, so that a checkpoint
// signature can never be taken for a signature over anything else.
const checkpointDomain = "toolwarden audit checkpoint v1\n"

// Signer signs checkpoints with an Ed25519 key.
type Signer struct {
	key ed25519.PrivateKey
	id  string
}

// NewSigner returns a Signer over key.
func NewSigner(key ed25519.PrivateKey) *Signer {
	return &Signer{key: key, id: KeyID(key.Public().(ed25519.PublicKey))}
}

// KeyID is the ID checkpoints name their key by.
func (s *Signer) KeyID() string { return s.id }

// KeyID names a public key: the first 8 bytes of the SHA-256 of its 32
// raw bytes, in hex.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// checkpointMessage is what a checkpoint's signature covers, one field a
// line after checkpointDomain: seq, prev (the chain head signed), time,
// replica, rule (why it was written) and key_id. A verifier in another
// language builds it from the line's fields alone.
func checkpointMessage(e *Entry) []byte {
	b := append([]byte(nil), checkpointDomain...)
	b = strconv.AppendUint(b, e.Seq, 10)
	for _, s := range []string{e.Prev, e.Time, e.Replica, e.Rule, e.KeyID} {
		b = append(append(b, '\n'), s...)
	}
	return append(b, '\n')
}

// sign sets e's KeyID and Signature; e's Seq, Prev, Time and Replica are
// final.
func (s *Signer) sign(e *Entry) {
	e.KeyID = s.id
	e.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(s.key, checkpointMessage(e)))
}

// checkpointEntry is a checkpoint line for the given reason, before write
// chains and signs it.
func checkpointEntry(rule string) Entry {
	return Entry{Session: "-", Tool: "-", ArgsSHA256: "-", Rule: rule, Outcome: OutcomeCheckpoint}
}

// afterWrite writes a checkpoint once this process has written
// CheckpointLines lines since its last one; mu and the writer lock are
// held. A checkpoint that cannot be written does not fail the call whose
// line is in: it is logged, and tried again at the next line.
func (a *Log) afterWrite() uint64 {
	s := a.opts.Signer
	if s == nil || a.opts.CheckpointLines <= 0 || a.unsigned < a.opts.CheckpointLines || a.last == nil {
		return 0
	}
	n, err := a.write(checkpointEntry(CheckpointLines), a.last, a.size)
	if err != nil {
		a.opts.Log.Warn("audit log: writing a checkpoint failed; tried again at the next line", "file", a.path, "err", err)
		return 0
	}
	return n
}

// checkpointTail writes a checkpoint for reason unless the chain already
// ends in one (or is empty); mu and the writer lock are held. A shutdown
// checkpoint is written after any other kind, so that a log ends with
// one.
func (a *Log) checkpointTail(rule string) error {
	last, size, err := a.lastEntry()
	if err != nil || last == nil {
		return err
	}
	if last.Outcome == OutcomeCheckpoint && (rule != CheckpointShutdown || last.Rule == CheckpointShutdown) {
		a.unsigned = 0
		return nil
	}
	_, err = a.write(checkpointEntry(rule), last, size)
	return err
}

// startCheckpoints signs the tail every CheckpointInterval while this
// process has written unsigned lines, until Close.
func (a *Log) startCheckpoints() {
	if a.opts.Signer == nil || a.opts.CheckpointInterval <= 0 {
		return
	}
	a.stopTicks = make(chan struct{})
	t := time.NewTicker(a.opts.CheckpointInterval)
	go func() {
		defer t.Stop()
		for {
			select {
			case <-a.stopTicks:
				return
			case <-t.C:
				a.tick()
			}
		}
	}()
}

// tick writes an interval checkpoint if lines of this process wait for one.
func (a *Log) tick() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || a.unsigned == 0 {
		return
	}
	if err := a.hold(time.Now()); err != nil {
		a.opts.Log.Warn("audit log: interval checkpoint", "file", a.path, "err", err)
		return
	}
	a.armPoll()
	if err := a.checkpointTail(CheckpointInterval); err != nil {
		a.opts.Log.Warn("audit log: writing a checkpoint failed", "file", a.path, "err", err)
	}
	if a.lk.wanted() {
		a.lk.release()
	}
}

// closeCheckpoint signs the tail at Close; mu is held.
func (a *Log) closeCheckpoint() error {
	if a.opts.Signer == nil {
		return nil
	}
	close(a.stopTicksOnce())
	if err := a.hold(time.Now()); err != nil {
		return err
	}
	return a.checkpointTail(CheckpointShutdown)
}

// stopTicksOnce returns a channel to close that stops the ticker (a
// fresh one when there is no ticker).
func (a *Log) stopTicksOnce() chan struct{} {
	if a.stopTicks == nil {
		return make(chan struct{})
	}
	return a.stopTicks
}
