package httpserve_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/mcpserver/httpserve"
)

// TestHTTPClosesIdleConnections: a keep-alive connection left idle after
// its request (a balancer's idle pool, or a client hoarding connections)
// is closed by the server, so it holds no goroutine and descriptor for
// ever.
func TestHTTPClosesIdleConnections(t *testing.T) {
	defer httpserve.SetIdleConnTimeout(300 * time.Millisecond)()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- httpserve.Serve(ctx, bareServer(), ln, httpserve.Options{Token: testToken, MaxBodyBytes: 64 << 10, MaxSessions: 3, IdleTimeout: time.Minute})
	}()
	t.Cleanup(func() { cancel(); <-done })

	conn, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	req := "POST /mcp HTTP/1.1\r\nHost: " + ln.Addr().String() + "\r\nAuthorization: Bearer " + testToken +
		"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: " +
		strconv.Itoa(len(initBody)) + "\r\n\r\n" + initBody
	_, err = io.WriteString(conn, req)
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.False(t, res.Close, "the answer keeps the connection alive")

	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	n, err := conn.Read(make([]byte, 1))
	require.Zero(t, n)
	require.ErrorIs(t, err, io.EOF, "the idle connection is closed by the server (not the 10 s deadline)")
}
