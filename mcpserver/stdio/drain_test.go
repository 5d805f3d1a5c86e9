package stdio

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMessageHead tells answers and the server's own requests (by their
// id, however spelled) from notifications, reading only as far as it
// needs.
func TestMessageHead(t *testing.T) {
	for _, c := range []struct {
		msg, key string
		kind     int
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"big":"x"}}`, "n:1", headAnswer},
		{`{"jsonrpc":"2.0","id":"a\u0062","error":{"code":-1}}`, "s:ab", headAnswer},
		{`{"result":{},"jsonrpc":"2.0","id":-7}`, "n:-7", headAnswer},
		{`{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{}}`, "n:3", headRequest},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, "", headOther},
		{`{"jsonrpc":"2.0","id":null,"error":{}}`, "", headOther},
		{`not json`, "", headOther},
	} {
		key, kind := messageHead([]byte(c.msg))
		require.Equal(t, c.kind, kind, c.msg)
		require.Equal(t, c.key, key, c.msg)
	}
}

// TestUnansweredWaitsOnlyForWhatCanStillBeAnswered: the end of input
// waits for requests passed on, but not for one whose call waits on an
// answer from the client (an elicitation), which can no longer come.
func TestUnansweredWaitsOnlyForWhatCanStillBeAnswered(t *testing.T) {
	var u unanswered
	u.asked([]byte(`"ab"`))
	u.asked([]byte(`1`))
	u.wrote([]byte(`{"jsonrpc":"2.0","id":"a\u0062","result":{}}`))
	require.True(t, u.waiting(), "request 1 has no answer yet")
	u.wrote([]byte(`{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{}}`))
	require.False(t, u.waiting(), "request 1 now waits on the client")
	u.replied([]byte(`1`))
	require.True(t, u.waiting(), "the client answered: request 1 goes on")
	u.wrote([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	require.False(t, u.waiting())
}
