package stdio_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/mcpserver/stdio"
	"golang.org/x/sys/unix"
)

// TestPollableInput: standard input that is a blocking pipe (as a client
// starts a stdio server with) is read through the poller, as only a
// pollable file takes a read deadline, then set back to blocking; a
// regular file is left as it is.
func TestPollableInput(t *testing.T) {
	var fds [2]int
	require.NoError(t, unix.Pipe2(fds[:], unix.O_CLOEXEC)) // blocking, unlike os.Pipe's
	r, w := os.NewFile(uintptr(fds[0]), "stdin"), os.NewFile(uintptr(fds[1]), "client")
	t.Cleanup(func() { r.Close(); w.Close() })
	require.ErrorIs(t, r.SetReadDeadline(time.Now()), os.ErrNoDeadline, "a blocking pipe is not polled")

	in, restore := stdio.PollableInput(r)
	require.NotSame(t, r, in)
	require.NoError(t, in.SetReadDeadline(time.Now().Add(time.Millisecond)))
	_, err := in.Read(make([]byte, 1))
	require.ErrorIs(t, err, os.ErrDeadlineExceeded, "a read waits on the poller")
	require.NoError(t, in.SetReadDeadline(time.Time{}))
	_, err = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
	require.NoError(t, err)
	buf := make([]byte, 64)
	n, err := in.Read(buf)
	require.NoError(t, err)
	require.Equal(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n", string(buf[:n]))

	restore()
	flags, err := unix.FcntlInt(r.Fd(), unix.F_GETFL, 0)
	require.NoError(t, err)
	require.Zero(t, flags&unix.O_NONBLOCK, "the pipe is blocking again")
	_, err = w.Write([]byte("x"))
	require.NoError(t, err)
	n, err = r.Read(buf)
	require.NoError(t, err, "the original descriptor still reads")
	require.Equal(t, "x", string(buf[:n]))

	file, err := os.Create(filepath.Join(t.TempDir(), "requests.jsonl"))
	require.NoError(t, err)
	t.Cleanup(func() { file.Close() })
	same, restore := stdio.PollableInput(file)
	restore()
	require.Same(t, file, same, "a file is read as it is")
}
