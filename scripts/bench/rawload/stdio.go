package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// stdioConn speaks newline-delimited JSON-RPC over a child's pipes. One
// reader goroutine hands each answer to the caller waiting for its id.
type stdioConn struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	writeMu sync.Mutex
	mu      sync.Mutex
	pending map[int64]chan []byte
	readErr error
	done    chan struct{}
}

// dialStdio starts the command and, for 2025-style protocols, performs the
// handshake.
func dialStdio(ctx context.Context, cfg config, command string) (conn, error) {
	argv := strings.Fields(command)
	cmd := exec.Command(argv[0], argv[1:]...)
	if cfg.childStderr {
		cmd.Stderr = os.Stderr
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &stdioConn{cmd: cmd, stdin: stdin, pending: map[int64]chan []byte{}, done: make(chan struct{})}
	go c.readLoop(bufio.NewReaderSize(stdout, 1<<20))
	if cfg.protocol < "2026-07-28" {
		if err := c.handshake(ctx, cfg); err != nil {
			_ = c.Close()
			return nil, err
		}
	}
	return c, nil
}

func (c *stdioConn) handshake(ctx context.Context, cfg config) error {
	id := ids.Add(1)
	raw, err := c.call(ctx, id, initializeRequest(cfg, id))
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil || r.Error != nil {
		return fmt.Errorf("initialize refused: %s", raw)
	}
	return c.write([]byte(initializedNotification))
}

func (c *stdioConn) write(line []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.stdin.Write(append(line, '\n'))
	return err
}

func (c *stdioConn) call(ctx context.Context, id int64, req []byte) ([]byte, error) {
	ch := make(chan []byte, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.write(req); err != nil {
		return nil, err
	}
	select {
	case raw := <-ch:
		return raw, nil
	case <-c.done:
		return nil, fmt.Errorf("server closed its output: %v", c.readErr)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readLoop delivers answers; notifications and server requests are dropped
// (rawload declares no client capabilities, so a server has nothing to ask).
func (c *stdioConn) readLoop(r *bufio.Reader) {
	defer close(c.done)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			c.readErr = err
			return
		}
		head, ok := readEnvelope(line)
		if !ok {
			continue
		}
		id, err := strconv.ParseInt(string(head.ID), 10, 64)
		if err != nil {
			continue
		}
		c.mu.Lock()
		ch := c.pending[id]
		c.mu.Unlock()
		if ch != nil {
			ch <- line
		}
	}
}

// cpuTime is the child's CPU time so far.
func (c *stdioConn) cpuTime() (time.Duration, bool) { return processCPU(c.cmd.Process.Pid) }

// Close ends the child's input and waits for it to exit.
func (c *stdioConn) Close() error {
	_ = c.stdin.Close()
	err := c.cmd.Wait()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return nil // servers may exit non-zero on EOF; that is not a benchmark failure
	}
	return err
}
