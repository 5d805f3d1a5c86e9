package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// The forwarder is this binary, mounted read-only at NetDir and started
// as the first program of a Network run under the name forwarderName. It
// listens on ProxyAddr in the sandbox's loopback before it starts the
// run's program as its child, relays each connection to the proxy socket,
// and exits with the program's status (128+N when signal N killed it, as
// a Result reports it either way), which ends the sandbox and everything
// left in it. It is no boundary: the program may reach the socket itself.
// What it can reach that way is the proxy, and the proxy decides.
func init() {
	if len(os.Args) > 0 && filepath.Base(os.Args[0]) == forwarderName {
		os.Exit(forwardMain(os.Args[1:]))
	}
}

// forwardMain runs the forwarder for "-- argv..."; 125 is its own failure,
// 127 a program that cannot be started, as a shell reports it.
func forwardMain(args []string) int {
	if len(args) < 2 || args[0] != "--" {
		fmt.Fprintln(os.Stderr, forwarderName+": usage: "+forwarderName+" -- program [args...]")
		return 125
	}
	ln, err := net.Listen("tcp", ProxyAddr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", forwarderName, err)
		return 125
	}
	go relayAll(ln, NetDir+"/"+proxySocketName)
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", forwarderName, err)
		return 127
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return 125
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// relayAll relays every connection ln accepts to the unix socket at sock.
func relayAll(ln net.Listener, sock string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go relay(c, sock)
	}
}

// relay copies c to a new connection to sock and back, passing each
// side's end of stream on, until both ends are closed.
func relay(c net.Conn, sock string) {
	defer c.Close()
	up, err := net.Dial("unix", sock)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{})
	go func() {
		copyThenCloseWrite(up, c)
		close(done)
	}()
	copyThenCloseWrite(c, up)
	<-done
}

type closeWriter interface{ CloseWrite() error }

// copyThenCloseWrite copies through a buffer of its own, never splice(2):
// under runsc, the splice Go's io.Copy makes from the unix socket to the
// TCP connection (TCPConn.ReadFrom) corrupts the stream, which TLS then
// refuses (e2e's TestEgressDownloadIntact).
func copyThenCloseWrite(dst, src net.Conn) {
	_, _ = io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, make([]byte, 128<<10))
	if cw, ok := dst.(closeWriter); ok {
		_ = cw.CloseWrite()
	} else {
		dst.Close()
	}
}
