package mcpserver

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAnswerID tells answers (by their id, however spelled) from server
// requests and notifications, reading only as far as it needs.
func TestAnswerID(t *testing.T) {
	for _, c := range []struct {
		msg, key string
		ok       bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"big":"x"}}`, "n:1", true},
		{`{"jsonrpc":"2.0","id":"a\u0062","error":{"code":-1}}`, "s:ab", true},
		{`{"result":{},"jsonrpc":"2.0","id":-7}`, "n:-7", true},
		{`{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{}}`, "", false},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, "", false},
		{`{"jsonrpc":"2.0","id":null,"error":{}}`, "", false},
		{`not json`, "", false},
	} {
		key, ok := answerID([]byte(c.msg))
		require.Equal(t, c.ok, ok, c.msg)
		require.Equal(t, c.key, key, c.msg)
	}
	var u unanswered
	u.asked([]byte(`"ab"`))
	u.asked([]byte(`1`))
	u.wrote([]byte(`{"jsonrpc":"2.0","id":"a\u0062","result":{}}`))
	u.wrote([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	require.Equal(t, 1, u.count(), "a server request with the same id answers nothing")
	u.wrote([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	require.Zero(t, u.count())
}
