package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"
)

// httpConn POSTs each request to a streamable-HTTP endpoint and reads the
// answer from a JSON body or an event stream.
type httpConn struct {
	url, token, protocol string
	tool                 string // for the 2026-07-28 Mcp-Name header
	session              string
	client               *http.Client
}

// dialHTTP makes the 2025-style handshake (keeping the session id), or
// nothing for 2026-07-28, which has no session.
func dialHTTP(ctx context.Context, cfg config, url, tool string) (conn, error) {
	tr := &http.Transport{MaxIdleConns: 4 * cfg.concurrency, MaxIdleConnsPerHost: 4 * cfg.concurrency, IdleConnTimeout: time.Minute}
	c := &httpConn{url: url, token: cfg.token, protocol: cfg.protocol, tool: tool, client: &http.Client{Transport: tr}}
	if cfg.protocol >= "2026-07-28" {
		return c, nil
	}
	id := ids.Add(1)
	resp, raw, err := c.post(ctx, initializeRequest(cfg, id), false)
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	c.session = resp.Header.Get("Mcp-Session-Id")
	var r response
	if err := json.Unmarshal(raw, &r); err != nil || r.Error != nil {
		return nil, fmt.Errorf("initialize refused: %s", raw)
	}
	if _, _, err := c.post(ctx, []byte(initializedNotification), false); err != nil {
		return nil, fmt.Errorf("initialized: %w", err)
	}
	return c, nil
}

func (c *httpConn) call(ctx context.Context, _ int64, req []byte) ([]byte, error) {
	_, raw, err := c.post(ctx, req, true)
	return raw, err
}

// post sends one message and returns the JSON-RPC answer (nil for a 202).
// A tools/call of the 2026-07-28 revision names its method and tool in
// headers too (SEP-2243), so a balancer can route without reading bodies.
func (c *httpConn) post(ctx context.Context, body []byte, toolCall bool) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", c.protocol)
	if toolCall && c.protocol >= "2026-07-28" {
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", c.tool)
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode == http.StatusAccepted {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp, nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return resp, nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "text/event-stream" {
		raw, err := firstAnswer(resp.Body)
		return resp, raw, err
	}
	raw, err := io.ReadAll(resp.Body)
	return resp, raw, err
}

// firstAnswer returns the first event's data that is a JSON-RPC answer
// (it has an id and no method), skipping notifications such as progress.
func firstAnswer(r io.Reader) ([]byte, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimSpace(line[5:])...)
		case len(line) == 0 && len(data) > 0:
			if _, ok := readEnvelope(data); ok {
				return data, nil
			}
			data = nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("event stream ended without an answer")
}

func (c *httpConn) Close() error {
	c.client.CloseIdleConnections()
	return nil
}
