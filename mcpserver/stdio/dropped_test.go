package stdio

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDroppedRequestAnswered: mcp-go's read loop, given a line in the
// instant its context ends, may pick the context over the line
// (readNextLine's select) and drop it; Listen has by then waited for every
// request it did take. The request last handed to mcp-go that is still
// unanswered once Listen has returned gets the session's end as its
// answer; one that was answered, or a notification, gets nothing more.
func TestDroppedRequestAnswered(t *testing.T) {
	var out bytes.Buffer
	g := newGate(&out)
	f := newLineFilter(strings.NewReader(""), g)
	hand := func(line string) {
		f.lines = make(chan []byte, 1)
		f.lines <- []byte(line + "\n")
		f.start.Do(func() {}) // no reading loop: the line is handed as is
		p := make([]byte, 4096)
		n, err := f.Read(p)
		require.NoError(t, err)
		require.Equal(t, line+"\n", string(p[:n]))
	}

	// Answered by mcp-go before Listen returned: nothing more.
	g.pending.asked([]byte(`7`))
	hand(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	_, _ = g.Write([]byte(`{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}` + "\n"))
	out.Reset()
	f.answerDropped()
	require.Empty(t, out.String(), "an answered request is not answered again")

	// Dropped: still unanswered once Listen has returned.
	g.pending.asked([]byte(`"r-8"`))
	hand(`{"jsonrpc":"2.0","id":"r-8","method":"resources/list"}`)
	f.answerDropped()
	require.Equal(t, string(endedAnswer([]byte(`"r-8"`)))+"\n", out.String())
	out.Reset()
	f.answerDropped()
	require.Empty(t, out.String(), "answered once")

	// A notification has no answer.
	hand(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	f.answerDropped()
	require.Empty(t, out.String())
}
