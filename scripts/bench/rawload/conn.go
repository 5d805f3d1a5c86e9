package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// conn sends one JSON-RPC request (its bytes hold the id) and returns the
// raw response with that id.
type conn interface {
	call(ctx context.Context, id int64, req []byte) ([]byte, error)
	Close() error
}

// ids numbers requests across all targets.
var ids atomic.Int64

// request builds a tools/call line; with the 2026-07-28 protocol the
// handshake's facts travel in params._meta instead.
func request(cfg config, t targetSpec, id int64) []byte {
	meta := ""
	if cfg.protocol >= "2026-07-28" {
		meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"` + cfg.protocol +
			`","io.modelcontextprotocol/clientCapabilities":{}}`
	}
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) +
		`,"method":"tools/call","params":{"name":` + strconv.Quote(t.tool) +
		`,"arguments":` + t.args + meta + `}}`)
}

// initializeRequest is the 2025-style handshake.
func initializeRequest(cfg config, id int64) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) +
		`,"method":"initialize","params":{"protocolVersion":` + strconv.Quote(cfg.protocol) +
		`,"capabilities":{},"clientInfo":{"name":"rawload","version":"0.1.0"}}}`)
}

const initializedNotification = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

// response is the part of an answer rawload checks.
type response struct {
	ID     json.RawMessage           `json:"id"`
	Error  *struct{ Message string } `json:"error"`
	Result *struct {
		IsError bool `json:"isError"`
	} `json:"result"`
}

// envelope is what tells an answer from a notification or a server's
// request: an answer has an id and no method.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// readEnvelope decodes msg's envelope; ok is false for anything but an answer.
func readEnvelope(msg []byte) (envelope, bool) {
	var e envelope
	if json.Unmarshal(msg, &e) != nil || e.Method != "" || len(e.ID) == 0 {
		return e, false
	}
	return e, true
}

// check turns a JSON-RPC error or an isError result into an error.
func check(raw []byte) error {
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("bad response: %w", err)
	}
	switch {
	case r.Error != nil:
		return errors.New("JSON-RPC error: " + r.Error.Message)
	case r.Result == nil:
		return errors.New("response without result")
	case r.Result.IsError:
		return fmt.Errorf("tool error: %.300s", raw)
	}
	return nil
}

// load makes n calls with cfg.concurrency in flight and returns their stats.
// The first failing call stops the run: a benchmark of errors is no benchmark.
func load(ctx context.Context, cfg config, t targetSpec, c conn, n int) (stats, error) {
	if n == 0 {
		return stats{}, nil
	}
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var once sync.Once
	var firstErr error
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < cfg.concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				d, err := timedCall(ctx, cfg, t, c)
				if err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
				lat[i] = d
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return stats{}, firstErr
	}
	return summarize(lat, time.Since(start)), nil
}

// timedCall makes one call and measures it from write to matched answer.
func timedCall(ctx context.Context, cfg config, t targetSpec, c conn) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	id := ids.Add(1)
	req := request(cfg, t, id)
	t0 := time.Now()
	raw, err := c.call(ctx, id, req)
	d := time.Since(t0)
	if err == nil {
		err = check(raw)
	}
	return d, err
}
