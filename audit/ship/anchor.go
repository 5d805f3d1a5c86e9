package ship

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/toolwarden/toolwarden/audit"
)

// Anchor is one record of a chain head, written to S3 as JSON under
// <prefix><replica>/<file>/<seq, 20 digits>-<hash>.json, so that listing
// the keys is enough to check a chain against them.
type Anchor struct {
	Replica    string `json:"replica"`
	File       string `json:"file"`
	Seq        uint64 `json:"seq"`
	Hash       string `json:"hash"`
	Time       string `json:"time"` // the line's
	AnchoredAt string `json:"anchored_at"`
}

// anchorDir is where the anchors of one replica's log are.
func anchorDir(prefix, replica, file string) string {
	return prefix + replica + "/" + file + "/"
}

func (a Anchor) key(prefix string) string {
	return fmt.Sprintf("%s%020d-%s.json", anchorDir(prefix, a.Replica, a.File), a.Seq, a.Hash)
}

// putTimeout bounds one anchor's PUT.
const putTimeout = 10 * time.Second

// Anchorer writes the chain head every interval when it moved, and once
// more at Close. A failed PUT is logged and retried at the next tick; it
// never touches the log.
type Anchorer struct {
	client                  *minio.Client
	bucket, prefix, replica string
	head                    func() (audit.Head, bool)
	log                     *slog.Logger

	mu       sync.Mutex
	last     audit.Head
	failures int
	quit     chan struct{}
	done     chan struct{}
	once     sync.Once
}

// NewAnchorer starts anchoring head every interval.
func NewAnchorer(client *minio.Client, bucket, prefix, replica string, every time.Duration,
	head func() (audit.Head, bool), log *slog.Logger) *Anchorer {
	a := &Anchorer{client: client, bucket: bucket, prefix: prefix, replica: replica, head: head, log: log,
		quit: make(chan struct{}), done: make(chan struct{})}
	go a.run(every)
	return a
}

func (a *Anchorer) run(every time.Duration) {
	defer close(a.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-a.quit:
			return
		case <-t.C:
			if err := a.Anchor(); err != nil {
				a.log.Warn("audit anchor: writing the chain head failed; retried at the next interval", "bucket", a.bucket, "err", err)
			}
		}
	}
}

// Anchor writes the head now, unless it is the one last written.
func (a *Anchorer) Anchor() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	h, ok := a.head()
	if !ok || (h.Seq == a.last.Seq && h.Hash == a.last.Hash) {
		return nil
	}
	rec := Anchor{Replica: a.replica, File: h.File, Seq: h.Seq, Hash: h.Hash, Time: h.Time,
		AnchoredAt: time.Now().UTC().Format(time.RFC3339Nano)}
	body, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), putTimeout)
	defer cancel()
	_, err = a.client.PutObject(ctx, a.bucket, rec.key(a.prefix), bytes.NewReader(body), int64(len(body)),
		minio.PutObjectOptions{ContentType: "application/json"})
	if err != nil {
		a.failures++
		return err
	}
	a.last = h
	return nil
}

// Close stops the ticker and writes the last head.
func (a *Anchorer) Close() error {
	a.once.Do(func() { close(a.quit) })
	<-a.done
	return a.Anchor()
}
