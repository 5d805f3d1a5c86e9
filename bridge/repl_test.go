package bridge_test

import (
	"bufio"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/bridge"
	fake "github.com/toolwarden/toolwarden/internal/geminifake"
)

func TestREPLSavesEveryTurnAndResets(t *testing.T) {
	h := newHarness(t, setup{}, fake.Reply(fake.Text("first answer")), fake.Reply(fake.Text("after reset")))
	session := filepath.Join(t.TempDir(), "s.json")
	var out, errOut syncBuffer
	input := "hello\n/save\n/reset\nagain\n/nope\n/quit\nnever sent\n"
	r := &bridge.REPL{Bridge: h.b, In: bufio.NewReader(strings.NewReader(input)), Out: &out, Err: &errOut, Session: session}
	require.NoError(t, r.Run(context.Background()))

	assert.Equal(t, "first answer\nafter reset\n", out.String())
	assert.Contains(t, errOut.String(), "/save needs a file name")
	assert.Contains(t, errOut.String(), "unknown command /nope")
	reqs := h.fake.Requests()
	require.Len(t, reqs, 2, "/quit stops reading")
	assert.Len(t, reqs[1].Contents(), 1, "/reset cleared the history")
	saved, err := bridge.LoadHistory(session)
	require.NoError(t, err)
	assert.Len(t, saved.Contents, 2, "the session is saved after every turn")
}

func TestREPLEndsAtEOF(t *testing.T) {
	h := newHarness(t, setup{})
	var out syncBuffer
	r := &bridge.REPL{Bridge: h.b, In: bufio.NewReader(strings.NewReader("/tools\n")), Out: &out, Err: &out}
	require.NoError(t, r.Run(context.Background()))
	assert.Contains(t, out.String(), "read_file — Read")
}
