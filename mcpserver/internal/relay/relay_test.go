package relay

import (
	"strconv"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
)

// recorder collects what a relay writes.
type recorder struct {
	mu  sync.Mutex
	got []string
}

func (r *recorder) write(n mcp.JSONRPCNotification) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, n.Method)
}

func (r *recorder) written() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

func note(i int) mcp.JSONRPCNotification {
	return mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{Method: "n" + strconv.Itoa(i)}}
}

// Every notification sent before Finish is written, in order, by the time
// Finish returns.
func TestFinishAfterEveryNotification(t *testing.T) {
	var rec recorder
	r := New(rec.write)
	var want []string
	for i := range 50 {
		r.Channel() <- note(i)
		want = append(want, "n"+strconv.Itoa(i))
	}
	r.Finish()
	require.Equal(t, want, rec.written())
	r.Finish() // a second Finish returns too
}

// A request that sends nothing starts no writer and makes no channel.
func TestNothingSentStartsNothing(t *testing.T) {
	var rec recorder
	r := New(rec.write)
	r.Finish()
	require.Nil(t, r.ch)
	require.Nil(t, r.stop)
	require.Empty(t, rec.written())
}

// What a late handler sends after the answer is not written and does not
// block it until the buffer is full (then the sender's select fails, as
// mcp-go's does on a full session channel).
func TestSentAfterFinishIsNotWritten(t *testing.T) {
	var rec recorder
	r := New(rec.write)
	r.Channel() <- note(0)
	r.Finish()
	for i := range Buffer {
		select {
		case r.Channel() <- note(i + 1):
		default:
			t.Fatalf("send %d after finish blocked", i)
		}
	}
	select {
	case r.Channel() <- note(-1):
		t.Fatal("a send past the buffer was taken")
	default:
	}
	require.Equal(t, []string{"n0"}, rec.written())

	late := New(rec.write)
	late.Finish()
	select {
	case late.Channel() <- note(1):
	default:
		t.Fatal("the first send after finish blocked")
	}
	require.Nil(t, late.stop, "a writer started after finish")
}

// Notifications sent from several goroutines (a handler's helpers) are
// all written by the time Finish returns, and none after (-race).
func TestConcurrentSends(t *testing.T) {
	var rec recorder
	r := New(rec.write)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 20 {
				select {
				case r.Channel() <- note(g*100 + i):
				default:
				}
			}
		})
	}
	wg.Wait()
	r.Finish()
	n := len(rec.written())
	require.Equal(t, 80, n)
	r.Finish()
	require.Len(t, rec.written(), n)
}
