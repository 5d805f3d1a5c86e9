// Package stdiorpc is the raw JSON-RPC a benchmark speaks to an MCP server
// over its stdin and stdout: the start-up handshake, and reading the answer
// to one request. startload and footprint share it.
package stdiorpc

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Initialized is the notification that ends the handshake; it is also
// what an HTTP session sends after initialize.
const Initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

// Initialize is the initialize request (id 1) of a client named client.
func Initialize(client string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` +
		client + `","version":"0"}}}`
}

const toolsList = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`

// ListTools does the handshake as client (initialize, notifications/
// initialized, tools/list with id 2) and returns the tools/list result.
func ListTools(w io.Writer, r *bufio.Reader, client string) (json.RawMessage, error) {
	if _, err := io.WriteString(w, Initialize(client)+"\n"); err != nil {
		return nil, err
	}
	if _, err := Answer(r, "1"); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if _, err := io.WriteString(w, Initialized+"\n"+toolsList+"\n"); err != nil {
		return nil, err
	}
	res, err := Answer(r, "2")
	if err != nil {
		return nil, fmt.Errorf("tools/list: %w", err)
	}
	return res, nil
}

// Answer reads lines until the answer with id, and returns its result.
func Answer(r *bufio.Reader, id string) (json.RawMessage, error) {
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("no answer: %w", err)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil || string(m.ID) != id {
			continue // a notification, or a server's request
		}
		if m.Error != nil {
			return nil, errors.New(string(m.Error))
		}
		return m.Result, nil
	}
}
