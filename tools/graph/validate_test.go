package graph

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

func decodeJSON(s string, out any) error { return json.Unmarshal([]byte(s), out) }

func TestCheckID(t *testing.T) {
	cases := []struct {
		in string
		ok bool
	}{
		{idA, true},
		{idB, true},
		{strings.ToUpper(idA), false},
		{"{" + idA + "}", false},
		{"urn:uuid:" + idA, false},
		{strings.ReplaceAll(idA, "-", ""), false},
		{uuid.Nil.String(), false},
		{idA + " ", false},
		{idA[:35], false},
		{"", false},
		{"0b6d3c7e-8f52-4a1e-9a59-3c1f2a4b5d6g", false},
		{"0b6d3c7e_8f52_4a1e_9a59_3c1f2a4b5d6e", false},
	}
	for _, tc := range cases {
		err := checkID("task_id", tc.in)
		if tc.ok {
			require.NoError(t, err, tc.in)
			continue
		}
		require.Equal(t, toolerr.InvalidUUID, toolerr.CodeOf(err), tc.in)
	}
}

// FuzzCheckID: whatever is accepted is its own canonical form.
func FuzzCheckID(f *testing.F) {
	for _, s := range []string{idA, strings.ToUpper(idA), "{" + idA + "}", "urn:uuid:" + idA} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if checkID("id", s) != nil {
			return
		}
		u, err := uuid.Parse(s)
		require.NoError(t, err)
		require.Equal(t, u.String(), s)
	})
}

func TestCheckText(t *testing.T) {
	cases := []struct {
		name      string
		in        string
		multiline bool
		required  bool
		ok        bool
	}{
		{"plain", "Write tests", false, true, true},
		{"unicode", "日本語 ünïcödé 👩‍💻", false, true, true},
		{"cypher-looking text is text", `'})-[:X]->() DETACH DELETE n //`, false, true, true},
		{"exactly the limit in characters", strings.Repeat("é", 40), false, true, true},
		{"over the limit", strings.Repeat("é", 41), false, true, false},
		{"newline when multiline", "a\nb\tc", true, true, true},
		{"newline on one line", "a\nb", false, true, false},
		{"carriage return", "a\rb", true, true, false},
		{"NUL", "a\x00b", true, true, false},
		{"escape", "a\x1b[31mb", true, true, false},
		{"C1 control", "a\u0085b", true, true, false},
		{"bidi override", "a\u202eb", true, true, false},
		{"bidi isolate", "a\u2067b", true, true, false},
		{"empty but optional", "", true, false, true},
		{"blank but required", " \t", true, true, false},
		{"invalid UTF-8", "a\xffb", true, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkText("description", tc.in, 40, tc.multiline, tc.required)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.Equal(t, toolerr.InvalidText, toolerr.CodeOf(err))
		})
	}
}

func TestCheckStatus(t *testing.T) {
	for _, s := range []string{"Pending", "InProgress", "Completed", "Failed"} {
		got, err := checkStatus(s)
		require.NoError(t, err)
		require.Equal(t, Status(s), got)
	}
	for _, s := range []string{"", "pending", "Done", "Completed ", "Completed'})"} {
		_, err := checkStatus(s)
		require.Equal(t, toolerr.InvalidEnum, toolerr.CodeOf(err), s)
	}
}

func TestCheckAgentID(t *testing.T) {
	for _, s := range []string{"coder-1", "a", "Agent_7.b", strings.Repeat("x", 64)} {
		require.NoError(t, checkAgentID(s), s)
	}
	for _, s := range []string{"", "-a", ".a", "a b", "a/b", "a'}) //", "`a`", "é", strings.Repeat("x", 65), "a\n"} {
		require.Equal(t, toolerr.InvalidArgument, toolerr.CodeOf(checkAgentID(s)), s)
	}
}

func TestCheckArtifactKey(t *testing.T) {
	prefix := "tasks/" + idA + "/artifacts/"
	for _, name := range []string{"report.md", "a", "out(1).tar.gz", "x+y=z,@~"} {
		require.NoError(t, checkArtifactKey(prefix+name, idA), name)
	}
	bad := []string{
		prefix,
		prefix + "../secret",
		prefix + "a..b",
		prefix + ".hidden",
		prefix + "-flag",
		prefix + "a/b",
		prefix + "a%2Fb",
		prefix + "a b",
		prefix + "é",
		prefix + strings.Repeat("a", 300),
		"/" + prefix + "a",
		"tasks/" + idB + "/artifacts/a",
		"tasks/" + strings.ToUpper(idA) + "/artifacts/a",
		"s3://bucket/" + prefix + "a",
	}
	for _, key := range bad {
		require.Equal(t, toolerr.InvalidArgument, toolerr.CodeOf(checkArtifactKey(key, idA)), key)
	}
}
