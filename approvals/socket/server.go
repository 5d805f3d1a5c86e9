package socket

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/toolwarden/toolwarden/approvals"
	"github.com/toolwarden/toolwarden/internal/strictjson"
)

// maxLineBytes bounds one request line.
const maxLineBytes = 64 << 10

// Server answers on one control socket.
type Server struct {
	hub  *approvals.Hub
	ln   *net.UnixListener
	path string
	// uid is the only user allowed to connect.
	uid int

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// Listen creates this process's socket in dir, mode 0600.
func Listen(hub *approvals.Hub, dir string) (*Server, error) {
	path := filepath.Join(dir, strconv.Itoa(os.Getpid())+suffix)
	_ = os.Remove(path) // a socket left by a killed process of the same pid
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	ln.SetUnlinkOnClose(true)
	return &Server{hub: hub, ln: ln, path: path, uid: os.Getuid(), conns: map[net.Conn]struct{}{}}, nil
}

// Path is the socket's path.
func (s *Server) Path() string { return s.path }

// Serve answers connections until ctx ends, then removes the socket.
func (s *Server) Serve(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		s.ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
	}()
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go s.serveConn(c)
	}
}

// serveConn checks the peer, then answers its requests, one a line.
func (s *Server) serveConn(c *net.UnixConn) {
	defer c.Close()
	uid, err := peerUID(c)
	if err == nil {
		err = checkPeer(uid, s.uid)
	}
	enc := json.NewEncoder(c)
	if err != nil {
		_ = enc.Encode(Response{Error: err.Error()})
		return
	}
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	defer func() { s.mu.Lock(); delete(s.conns, c); s.mu.Unlock() }()
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 4096), maxLineBytes)
	for sc.Scan() {
		var req Request
		// Exact member names, no duplicates, no unknown members: a
		// {"approve":false,"Approve":true} must not approve.
		if err := strictjson.Unmarshal(sc.Bytes(), &req); err != nil {
			_ = enc.Encode(Response{Error: "bad request: " + err.Error()})
			return
		}
		if req.Op == OpWatch {
			s.watch(c, enc)
			return
		}
		if enc.Encode(s.answer(req, uid)) != nil {
			return
		}
	}
}

// checkPeer lets only the server's own user decide: the socket's mode
// already says so, and the kernel's word on the peer makes sure of it.
func checkPeer(peer, self int) error {
	if peer != self {
		return fmt.Errorf("refused: uid %d may not use the control socket of a server running as uid %d", peer, self)
	}
	return nil
}

func (s *Server) answer(req Request, uid int) Response {
	switch req.Op {
	case OpList:
		return Response{OK: true, Requests: s.hub.List()}
	case OpDecide:
		by := fmt.Sprintf("terminal uid=%d", uid)
		d := approvals.Decision{Approve: req.Approve, Channel: "terminal", By: by, Reason: req.Reason}
		if !d.Approve && d.Reason == "" {
			d.Reason = "denied on the terminal"
		}
		if err := s.hub.Decide(req.ID, req.Digest, d); err != nil {
			return Response{Error: err.Error()}
		}
		return Response{OK: true}
	}
	return Response{Error: fmt.Sprintf("unknown op %q", req.Op)}
}

// watch sends every waiting call, then each change, until the peer goes.
func (s *Server) watch(c net.Conn, enc *json.Encoder) {
	events, cancel := s.hub.Subscribe()
	defer cancel()
	for _, r := range s.hub.List() {
		if enc.Encode(Response{OK: true, Event: &approvals.Event{Kind: "pending", Request: r}}) != nil {
			return
		}
	}
	gone := make(chan struct{})
	go func() { _, _ = c.Read(make([]byte, 1)); close(gone) }()
	for {
		select {
		case <-gone:
			return
		case e, open := <-events:
			if !open || enc.Encode(Response{OK: true, Event: &e}) != nil {
				return
			}
		}
	}
}
