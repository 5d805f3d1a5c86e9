package egress

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// connect serves a CONNECT: check the target, connect (or, for a brokered
// host, only check), then check the ClientHello's name before a byte of
// it leaves.
func (c *Call) connect(f *flow, br io.Reader, req *http.Request) {
	ev := &f.ev
	t, err := parseTarget(req.RequestURI)
	if err != nil {
		ev.Host = truncate(req.RequestURI)
		f.refuse(refusal(RuleTarget, "%q is not a plain DNS name or IP address with a port: %v", truncate(req.RequestURI), err))
		return
	}
	ev.Host, ev.Port = t.host, t.port
	var creds []credential
	if !t.ip.IsValid() {
		creds = c.pol.brokered(t.host)
	}
	if len(creds) > 0 {
		err = c.checkOnly(f, t)
	} else {
		var up net.Conn
		if up, err = c.connectTo(f, t); err == nil {
			f.setUpstream(up)
		}
	}
	if err != nil {
		f.refuse(err)
		return
	}
	if _, err := io.WriteString(f, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	hello, recorded, err := peekHello(br)
	if err != nil {
		if !f.isCut() {
			ev.Rule = RuleTLSOnly
		}
		return
	}
	if !sniMatches(hello.ServerName, t) {
		ev.Rule = RuleSNI
		return
	}
	ev.Allowed = true
	replay := io.MultiReader(bytes.NewReader(recorded), br)
	if len(creds) > 0 {
		c.broker(f, t, creds, replay)
		return
	}
	f.mu.Lock()
	up := f.upstream
	f.mu.Unlock()
	pipe(f, up, replay)
}

// checkOnly decides a brokered target now, so that a refused one is
// answered 403; the requests dial it later, each checked again.
func (c *Call) checkOnly(f *flow, t target) error {
	_, err := c.resolve(f.ctx, t)
	return err
}

func (c *Call) connectTo(f *flow, t target) (net.Conn, error) {
	conn, addr, err := c.dial(f.ctx, t)
	if err != nil {
		return nil, err
	}
	f.ev.Addr = addr.String()
	return conn, nil
}

// sniMatches: a name must be sent and be the CONNECT's; an address is
// CONNECTed to without one (clients send no SNI for addresses).
func sniMatches(sni string, t target) bool {
	if t.ip.IsValid() {
		return sni == ""
	}
	return strings.EqualFold(sni, t.host)
}

func truncate(s string) string {
	if len(s) > 256 {
		return s[:256] + "..."
	}
	return s
}

// errPeeked stops the handshake once the ClientHello is parsed.
var errPeeked = errors.New("egress: ClientHello read")

// peekHello parses the ClientHello with crypto/tls itself (a server
// handshake stopped by GetConfigForClient) and returns it with every byte
// read, to be replayed: nothing is written to the client, nothing sent on.
func peekHello(r io.Reader) (*tls.ClientHelloInfo, []byte, error) {
	rec := &recordConn{r: r}
	var hello *tls.ClientHelloInfo
	err := tls.Server(rec, &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		hello = &tls.ClientHelloInfo{ServerName: h.ServerName}
		return nil, errPeeked
	}}).Handshake()
	if hello == nil {
		return nil, nil, err
	}
	return hello, rec.buf.Bytes(), nil
}

// recordConn is the read side of a connection, recorded; writes vanish.
type recordConn struct {
	r   io.Reader
	buf bytes.Buffer
}

func (c *recordConn) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.buf.Write(p[:n])
	return n, err
}
func (c *recordConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *recordConn) Close() error                     { return nil }
func (c *recordConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *recordConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *recordConn) SetDeadline(time.Time) error      { return nil }
func (c *recordConn) SetReadDeadline(time.Time) error  { return nil }
func (c *recordConn) SetWriteDeadline(time.Time) error { return nil }

var bufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// pipe copies both ways until both are done; an end of stream is passed
// on as a half-close, an error closes everything.
func pipe(f *flow, up net.Conn, replay io.Reader) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if copyBuf(up, replay) == nil {
			closeWrite(up)
		} else {
			f.Close()
		}
	}()
	if copyBuf(f, up) == nil {
		closeWrite(f.Conn)
	} else {
		f.Close()
	}
	<-done
}

func copyBuf(dst io.Writer, src io.Reader) error {
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	buf := *bp
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}
