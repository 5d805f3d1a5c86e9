package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// stdioFront serves streamable HTTP for the conformance suite (whose
// server command takes only --url) and relays every message to
// toolwarden over stdio: one `serve` process per session (each
// initialize of a revision before 2026-07-28 starts one), and one for all
// requests of 2026-07-28, which have no session. A request's answer, and
// whatever the process sends while it is waited for (notifications,
// requests to the client), go back on the POST's event stream; a response
// of the client or a notification is written to the process and answered
// 202. There is no GET stream (405, as the transport allows), so nothing
// reaches the client between requests.
type stdioFront struct {
	t     *testing.T
	start func() *exec.Cmd

	mu       sync.Mutex
	sessions map[string]*stdioProc
	modern   *stdioProc
	next     atomic.Int64
}

// stdioProc is one toolwarden stdio process and the requests waiting for
// its answers.
type stdioProc struct {
	cmd   *exec.Cmd
	wmu   sync.Mutex // over stdin writes
	stdin io.WriteCloser

	mu      sync.Mutex // over waiting and current
	waiting map[string]chan json.RawMessage
	// current is the stream of the request sent last and not yet
	// answered: what the process sends that is not an answer goes there.
	current chan json.RawMessage
}

// serveStdioFront starts the front on a local port and returns its /mcp
// URL; start makes the command of one stdio process.
func serveStdioFront(t *testing.T, start func() *exec.Cmd) string {
	t.Helper()
	f := &stdioFront{t: t, start: start, sessions: map[string]*stdioProc{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: f, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = srv.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, p := range f.sessions {
			p.stop()
		}
		if f.modern != nil {
			f.modern.stop()
		}
	})
	return fmt.Sprintf("http://localhost:%d/mcp", ln.Addr().(*net.TCPAddr).Port)
}

func (f *stdioFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		f.mu.Lock()
		p := f.sessions[r.Header.Get("Mcp-Session-Id")]
		delete(f.sessions, r.Header.Get("Mcp-Session-Id"))
		f.mu.Unlock()
		if p == nil {
			http.Error(w, "unknown session", http.StatusNotFound)
			return
		}
		p.stop()
		w.WriteHeader(http.StatusOK)
		return
	default:
		http.Error(w, "no event stream over the stdio front", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		http.Error(w, "not a JSON-RPC message", http.StatusBadRequest)
		return
	}
	p, session, status := f.proc(r, msg.Method, msg.Params.Meta)
	if p == nil {
		http.Error(w, http.StatusText(status), status)
		return
	}
	if msg.ID == nil || msg.Method == "" {
		// A notification, or the client's answer to a request of the
		// process.
		if err := p.write(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	stream, err := p.send(string(msg.ID), body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if session != "" {
		w.Header().Set("Mcp-Session-Id", session)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for {
		select {
		case out, ok := <-stream:
			if !ok {
				return
			}
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", out)
			w.(http.Flusher).Flush()
		case <-r.Context().Done():
			p.forget(string(msg.ID))
			return
		}
	}
}

// proc finds the process of r's message, starting one for an initialize
// (and its session ID) or for the first request of 2026-07-28.
func (f *stdioFront) proc(r *http.Request, method string, meta map[string]any) (p *stdioProc, session string, status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, modern := meta["io.modelcontextprotocol/protocolVersion"]
	switch {
	case modern || r.Header.Get("Mcp-Protocol-Version") == "2026-07-28":
		if f.modern == nil {
			f.modern = f.spawn()
		}
		return f.modern, "", 0
	case method == "initialize":
		session = "stdio-front-" + strconv.FormatInt(f.next.Add(1), 10)
		p = f.spawn()
		f.sessions[session] = p
		return p, session, 0
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		return nil, "", http.StatusBadRequest
	}
	if p = f.sessions[id]; p == nil {
		return nil, "", http.StatusNotFound
	}
	return p, "", 0
}

func (f *stdioFront) spawn() *stdioProc {
	cmd := f.start()
	stdin, err := cmd.StdinPipe()
	require.NoError(f.t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(f.t, err)
	require.NoError(f.t, cmd.Start())
	p := &stdioProc{cmd: cmd, stdin: stdin, waiting: map[string]chan json.RawMessage{}}
	go p.read(stdout)
	return p
}

// read routes each line the process writes: an answer to the request
// waiting for it (ending its stream), anything else to the current one.
func (p *stdioProc) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := json.RawMessage(bytes.Clone(sc.Bytes()))
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &msg) != nil {
			continue
		}
		p.mu.Lock()
		if msg.ID != nil && msg.Method == "" {
			if ch, ok := p.waiting[string(msg.ID)]; ok {
				delete(p.waiting, string(msg.ID))
				if p.current == ch {
					p.current = nil
				}
				ch <- line
				close(ch)
			}
		} else if p.current != nil {
			select {
			case p.current <- line:
			default: // the stream's reader is gone
			}
		}
		p.mu.Unlock()
	}
}

// send writes a request and returns the stream its answer ends.
func (p *stdioProc) send(id string, body []byte) (chan json.RawMessage, error) {
	ch := make(chan json.RawMessage, 256)
	p.mu.Lock()
	p.waiting[id] = ch
	p.current = ch
	p.mu.Unlock()
	return ch, p.write(body)
}

func (p *stdioProc) forget(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ch, ok := p.waiting[id]; ok && p.current == ch {
		p.current = nil
	}
	delete(p.waiting, id)
}

func (p *stdioProc) write(body []byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, err := p.stdin.Write(append(bytes.TrimSpace(body), '\n'))
	return err
}

func (p *stdioProc) stop() {
	_ = p.stdin.Close()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// stdioCommand is the command of one stdio process of the tagged binary,
// with conformanceFront's config and workspace.
func stdioCommand(ctx context.Context, tagged, cfgPath, ws string, env []string) func() *exec.Cmd {
	return func() *exec.Cmd {
		cmd := exec.CommandContext(ctx, tagged, "serve", "--config", cfgPath, "--workspace", ws)
		cmd.Env = env
		return cmd
	}
}
