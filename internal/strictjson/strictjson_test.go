package strictjson_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/strictjson"
)

type decision struct {
	ID     string `json:"id"`
	Action string `json:"action"`
}

// TestHostileBodies: each body two JSON readers could read differently
// is refused, naming the rule; the plain one decodes.
func TestHostileBodies(t *testing.T) {
	cases := []struct {
		name, body string
		open       bool
		want       error // nil: any error
	}{
		{"case twin", `{"id":"1","action":"deny","Action":"approve"}`, false, strictjson.ErrUnknownMember},
		{"upper-case only", `{"id":"1","ACTION":"approve"}`, false, strictjson.ErrUnknownMember},
		{"unicode fold (long s)", `{"id":"1","action":"deny","actıon":"approve"}`, false, strictjson.ErrUnknownMember},
		{"duplicate", `{"id":"1","action":"deny","action":"approve"}`, false, strictjson.ErrDuplicateMember},
		{"duplicate, open", `{"id":"1","action":"deny","action":"approve"}`, true, strictjson.ErrDuplicateMember},
		{"duplicate by escape", `{"id":"1","action":"deny","\u0061ction":"approve"}`, true, strictjson.ErrDuplicateMember},
		{"unknown", `{"id":"1","action":"deny","by":"x"}`, false, strictjson.ErrUnknownMember},
		{"trailing value", `{"id":"1","action":"deny"}{"action":"approve"}`, true, nil},
		{"invalid UTF-8", "{\"id\":\"\xff\",\"action\":\"deny\"}", true, nil},
		{"wrong type", `{"id":1,"action":"deny"}`, true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var d decision
			decode := strictjson.Unmarshal
			if tc.open {
				decode = strictjson.UnmarshalOpen
			}
			err := decode([]byte(tc.body), &d)
			require.Error(t, err, "decoded %+v", d)
			if tc.want != nil {
				require.True(t, errors.Is(err, tc.want), "%v", err)
			}
		})
	}
}

// TestOpenSkipsOthersMembers: a third party's extra members, a case twin
// among them, are skipped; the exact name is the one read.
func TestOpenSkipsOthersMembers(t *testing.T) {
	var d decision
	require.NoError(t, strictjson.UnmarshalOpen([]byte(`{"id":"1","Action":"approve","action":"deny","extra":[1,{"a":2}]}`), &d))
	require.Equal(t, decision{ID: "1", Action: "deny"}, d)
	require.NoError(t, strictjson.Unmarshal([]byte(`{"id":"1","action":"deny"}`), &d))
}
