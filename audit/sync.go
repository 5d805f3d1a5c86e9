package audit

import (
	"log/slog"
	"sync"
	"time"
)

// syncer fsyncs the audit file. Writes are numbered; wait returns once a
// write is durable. Concurrent waiters share one fsync (group commit): a
// caller that finds an fsync running waits for it, and if it began before
// the caller's write, the next fsync covers everyone who arrived meanwhile.
type syncer struct {
	fsync func() error
	log   *slog.Logger

	mu              sync.Mutex
	done            *sync.Cond
	written, synced uint64
	busy            bool

	quit     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

// newSyncer starts, for SyncInterval, the ticker that fsyncs at most every
// interval when something was written.
func newSyncer(mode SyncMode, every time.Duration, fsync func() error, log *slog.Logger) *syncer {
	s := &syncer{fsync: fsync, log: log, quit: make(chan struct{})}
	s.done = sync.NewCond(&s.mu)
	if mode == SyncInterval {
		if every <= 0 {
			every = time.Second
		}
		s.wg.Go(func() { s.tick(every) })
	}
	return s
}

// wrote counts a write and returns its number.
func (s *syncer) wrote() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.written++
	return s.written
}

// markSynced records that every write so far is durable (the file was
// fsynced by a rotation or a reopen).
func (s *syncer) markSynced() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.synced = s.written
	s.done.Broadcast()
}

// wait returns once write n is durable.
func (s *syncer) wait(n uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.synced < n {
		if s.busy {
			s.done.Wait()
			continue
		}
		if err := s.flushLocked(); err != nil {
			return err
		}
	}
	return nil
}

// flushLocked runs one fsync for every write counted so far; s.mu is held
// on entry and exit but not during the fsync.
func (s *syncer) flushLocked() error {
	s.busy = true
	target := s.written
	s.mu.Unlock()
	err := s.fsync()
	s.mu.Lock()
	s.busy = false
	if err == nil && target > s.synced {
		s.synced = target
	}
	s.done.Broadcast()
	return err
}

func (s *syncer) tick(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
		}
		s.mu.Lock()
		if s.written > s.synced && !s.busy {
			if err := s.flushLocked(); err != nil {
				s.log.Warn("audit log: fsync failed", "err", err)
			}
		}
		s.mu.Unlock()
	}
}

// stop ends the ticker.
func (s *syncer) stop() {
	s.stopOnce.Do(func() { close(s.quit) })
	s.wg.Wait()
}
