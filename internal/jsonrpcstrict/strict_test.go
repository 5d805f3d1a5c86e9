package jsonrpcstrict

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"notes/today.md"}}}`

func TestCheckAccepts(t *testing.T) {
	cases := []struct {
		name, msg string
		kind      Kind
		id        string
	}{
		{"tools/call", call, Request, "7"},
		{"string id", `{"jsonrpc":"2.0","id":"a\u0062","method":"ping"}`, Request, `"a\u0062"`},
		{"largest safe id", `{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}`, Request, "9007199254740991"},
		{"negative id", `{"jsonrpc":"2.0","id":-9007199254740991,"method":"ping"}`, Request, "-9007199254740991"},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, Notification, ""},
		{"members in any order, spaces", ` { "method" : "ping" , "id" : 0 , "jsonrpc" : "2.0" } ` + "\r\n", Request, "0"},
		{"result", `{"jsonrpc":"2.0","id":3,"result":{"action":"accept","content":{"ok":true}}}`, Response, "3"},
		{"error with null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}`, Response, "null"},
		{"unicode argument names", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"ſ":1,"ö":2}}}`, Request, "1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Check([]byte(tc.msg))
			require.NoError(t, err)
			require.Equal(t, tc.kind, m.Kind)
			require.Equal(t, tc.id, string(m.ID))
		})
	}
	m, err := Check([]byte(call))
	require.NoError(t, err)
	require.Equal(t, "tools/call", m.Method)
	require.JSONEq(t, `{"name":"read_file","arguments":{"path":"notes/today.md"}}`, string(m.Params))
}

// hostile are messages a lenient decoder would take in some way; each is
// refused with the code and the answer id listed.
var hostile = []struct {
	name, msg string
	code      int
	id        string // echoed id, "null" when unknown or invalid
	reason    string // a part of the message naming the rule
}{
	{"not json", `not json at all`, CodeParseError, "null", "invalid character"},
	{"empty", ``, CodeParseError, "null", "empty message"},
	{"truncated", `{"jsonrpc":"2.0","id":1,"method":"ping"`, CodeParseError, "1", "unexpected EOF"},
	{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"ping"} xyz`, CodeParseError, "1", "trailing data"},
	{"two messages on one line", `{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}`, CodeParseError, "1", "trailing data"},
	{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":\"\xff\"}}", CodeParseError, "1", "UTF-8"},
	{"lone surrogate", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"\ud800"}}`, CodeParseError, "1", "surrogate"},
	{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, CodeInvalidRequest, "null", "batch"},
	{"scalar", `42`, CodeInvalidRequest, "null", "must be a JSON object"},
	{"wrong jsonrpc", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, CodeInvalidRequest, "null", `"2.0"`},
	{"numeric jsonrpc", `{"jsonrpc":2.0,"id":1,"method":"ping"}`, CodeInvalidRequest, "null", `"2.0"`},
	{"missing jsonrpc", `{"id":1,"method":"ping"}`, CodeInvalidRequest, "1", "missing"},
	{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, CodeInvalidRequest, "null", `"id" must be`},
	{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, CodeInvalidRequest, "null", `"id" must be`},
	{"bool id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, CodeInvalidRequest, "null", `"id" must be`},
	{"float id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, CodeInvalidRequest, "null", "integer"},
	{"integral float id", `{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, CodeInvalidRequest, "null", "integer"},
	{"exponent id", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, CodeInvalidRequest, "null", "integer"},
	{"minus zero id", `{"jsonrpc":"2.0","id":-0,"method":"ping"}`, CodeInvalidRequest, "null", "integer"},
	{"2^53 id", `{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`, CodeInvalidRequest, "null", "2^53-1"},
	{"huge id", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`, CodeInvalidRequest, "null", "2^53-1"},
	{"null id request", `{"jsonrpc":"2.0","id":null,"method":"tools/call"}`, CodeInvalidRequest, "null", "not null"},
	{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, CodeInvalidRequest, "1", "duplicate"},
	{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`, CodeInvalidRequest, "1", "duplicate"},
	{"duplicate params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{},"params":{"name":"x"}}`, CodeInvalidRequest, "1", "duplicate"},
	{"duplicate in params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","name":"exec"}}`, CodeInvalidRequest, "1", "duplicate"},
	{"duplicate in arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"path":"a","path":"/etc/shadow"}}}`, CodeInvalidRequest, "1", "duplicate"},
	{"Method", `{"jsonrpc":"2.0","id":1,"Method":"tools/call"}`, CodeInvalidRequest, "1", `unknown member "Method"`},
	{"JSONRPC", `{"JSONRPC":"2.0","id":1,"method":"ping"}`, CodeInvalidRequest, "null", "unknown member"},
	{"ID", `{"jsonrpc":"2.0","ID":{},"method":"ping"}`, CodeInvalidRequest, "null", "unknown member"},
	{"long s params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","paramſ":{"name":"read_file"}}`, CodeInvalidRequest, "1", "unknown member"},
	{"Kelvin sign", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"\u212a\":1,\"k\":2}}", CodeInvalidRequest, "1", "collides"},
	{"case twin in params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","NAME":"exec"}}`, CodeInvalidRequest, "1", "collides"},
	{"long s twin in arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"paths":["a"],"pathſ":["/"]}}}`, CodeInvalidRequest, "1", "collides"},
	{"unknown member", `{"jsonrpc":"2.0","id":1,"method":"ping","extra":1}`, CodeInvalidRequest, "1", "unknown member"},
	{"method not a string", `{"jsonrpc":"2.0","id":1,"method":["tools/call"]}`, CodeInvalidRequest, "1", `"method" must be a string`},
	{"params array", `{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`, CodeInvalidRequest, "1", "must be an object"},
	{"method and result", `{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`, CodeInvalidRequest, "1", "carries no"},
	{"result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`, CodeInvalidRequest, "1", "exactly one"},
	{"no method no result", `{"jsonrpc":"2.0","id":1}`, CodeInvalidRequest, "1", "exactly one"},
	{"params without method", `{"jsonrpc":"2.0","id":1,"params":{},"result":{}}`, CodeInvalidRequest, "1", `"params" without`},
	{"result with null id", `{"jsonrpc":"2.0","id":null,"result":{}}`, CodeInvalidRequest, "null", "null"},
	{"deep nesting", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100) + `}`, CodeInvalidRequest, "1", "nesting"},
	{"very deep nesting", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + strings.Repeat(`[`, 100000) + strings.Repeat("]", 100000) + `}`, CodeInvalidRequest, "1", "nesting"},
}

func TestCheckRefuses(t *testing.T) {
	for _, tc := range hostile {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check([]byte(tc.msg))
			var e *Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, tc.code, e.Code, e.Error())
			require.Contains(t, e.Error(), tc.reason)
			var resp struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal(e.Response(), &resp))
			require.Equal(t, "2.0", resp.JSONRPC)
			require.Equal(t, tc.id, string(resp.ID))
			require.Equal(t, tc.code, resp.Error.Code)
			require.Equal(t, e.Error(), resp.Error.Message)
		})
	}
}

func TestFold(t *testing.T) {
	for _, pair := range [][2]string{{"name", "NAME"}, {"params", "paramſ"}, {"k", "\u212a"}, {"ö", "Ö"}, {"straße", "STRAßE"}} {
		require.Equal(t, fold(pair[0]), fold(pair[1]), pair)
	}
	require.NotEqual(t, fold("name"), fold("names"))
}
