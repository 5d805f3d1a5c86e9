package socket

import (
	"bufio"
	"encoding/json"
	"errors"
	"net"
	"time"

	"github.com/toolwarden/toolwarden/approvals"
	"github.com/toolwarden/toolwarden/internal/strictjson"
)

// Client talks to one server's control socket.
type Client struct {
	Socket string
	conn   net.Conn
	sc     *bufio.Scanner
}

// Dial connects to socket.
func Dial(socket string) (*Client, error) {
	c, err := net.DialTimeout("unix", socket, 5*time.Second)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	return &Client{Socket: socket, conn: c, sc: sc}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

func (c *Client) send(req Request) error {
	b, _ := json.Marshal(req)
	_, err := c.conn.Write(append(b, '\n'))
	return err
}

// Next reads the server's next response line.
func (c *Client) Next() (Response, error) {
	if !c.sc.Scan() {
		if err := c.sc.Err(); err != nil {
			return Response{}, err
		}
		return Response{}, errors.New("the server closed the control socket")
	}
	var r Response
	// A newer server may say more than this client reads; names are
	// still exact and appear once.
	if err := strictjson.UnmarshalOpen(c.sc.Bytes(), &r); err != nil {
		return Response{}, err
	}
	if r.Error != "" {
		// The caller prints it: no raw terminal controls from the server.
		return r, errors.New(oneLine(r.Error))
	}
	return r, nil
}

func (c *Client) call(req Request) (Response, error) {
	if err := c.send(req); err != nil {
		// A refused peer is told why before the server hangs up.
		if r, nerr := c.Next(); r.Error != "" {
			return r, nerr
		}
		return Response{}, err
	}
	return c.Next()
}

// List returns the server's waiting calls.
func (c *Client) List() ([]approvals.Request, error) {
	r, err := c.call(Request{Op: OpList})
	return r.Requests, err
}

// Decide approves or denies the waiting call named by id and digest.
func (c *Client) Decide(id, digest string, approve bool, reason string) error {
	_, err := c.call(Request{Op: OpDecide, ID: id, Digest: digest, Approve: approve, Reason: reason})
	return err
}

// Watch turns the connection into a stream of events; read them with
// Next.
func (c *Client) Watch() error { return c.send(Request{Op: OpWatch}) }
