package guard

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewPolicyRejectsInvalidGlobs(t *testing.T) {
	tests := []struct {
		name        string
		allow, deny []string
		wantErr     bool
	}{
		{name: "plain names", allow: []string{"read_file", "list_directory"}},
		{name: "star and braces", allow: []string{"read_*", "{a,b}"}, deny: []string{"write_*"}},
		{name: "no lists at all"},
		{name: "unclosed bracket in allow", allow: []string{"read_["}, wantErr: true},
		{name: "unclosed brace in deny", allow: []string{"*"}, deny: []string{"{write_file"}, wantErr: true},
		{name: "one bad glob among good ones", allow: []string{"read_file", "[", "grep_files"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPolicy(tt.allow, tt.deny)
			if tt.wantErr {
				require.Error(t, err)
				require.Contains(t, err.Error(), "invalid tool-name glob")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.allow, p.Allow)
			require.Equal(t, tt.deny, p.Deny)
		})
	}
}

func TestNewPolicyDoesNotAliasCallerSlices(t *testing.T) {
	allow := make([]string, 1, 4)
	allow[0] = "read_file"
	deny := []string{"write_*"}
	_, err := NewPolicy(allow, deny)
	require.NoError(t, err)
	// The validation loop appends deny to a copy of allow; it must not have
	// written into allow's spare capacity.
	require.Equal(t, "", allow[:2][1])
}

func TestPolicyMatch(t *testing.T) {
	tests := []struct {
		name     string
		allow    []string
		deny     []string
		tool     string
		wantOK   bool
		wantRule string
	}{
		{name: "exact allow", allow: []string{"read_file"}, tool: "read_file", wantOK: true, wantRule: `allow:"read_file"`},
		{name: "not listed", allow: []string{"read_file"}, tool: "write_file", wantRule: "default:not_allowlisted"},
		{name: "empty policy allows nothing", tool: "read_file", wantRule: "default:not_allowlisted"},
		{name: "prefix glob", allow: []string{"read_*"}, tool: "read_multiple_files", wantOK: true, wantRule: `allow:"read_*"`},
		{name: "prefix glob does not match other prefix", allow: []string{"read_*"}, tool: "write_file", wantRule: "default:not_allowlisted"},
		{name: "exact name is not a prefix", allow: []string{"read"}, tool: "read_file", wantRule: "default:not_allowlisted"},
		{name: "brace first", allow: []string{"{a,b}"}, tool: "a", wantOK: true, wantRule: `allow:"{a,b}"`},
		{name: "brace second", allow: []string{"{a,b}"}, tool: "b", wantOK: true, wantRule: `allow:"{a,b}"`},
		{name: "brace other", allow: []string{"{a,b}"}, tool: "c", wantRule: "default:not_allowlisted"},
		{name: "brace is not a prefix", allow: []string{"{a,b}"}, tool: "ab", wantRule: "default:not_allowlisted"},
		{name: "deny beats allow star", allow: []string{"*"}, deny: []string{"write_*"}, tool: "write_file", wantRule: `deny:"write_*"`},
		{name: "allow star lets the rest through", allow: []string{"*"}, deny: []string{"write_*"}, tool: "read_file", wantOK: true, wantRule: `allow:"*"`},
		{name: "deny beats an exact allow", allow: []string{"delete_file"}, deny: []string{"delete_file"}, tool: "delete_file", wantRule: `deny:"delete_file"`},
		{name: "first matching deny is named", allow: []string{"*"}, deny: []string{"move_*", "{move,delete}_file"}, tool: "move_file", wantRule: `deny:"move_*"`},
		{name: "first matching allow is named", allow: []string{"grep_*", "*"}, tool: "grep_files", wantOK: true, wantRule: `allow:"grep_*"`},
		{name: "case sensitive", allow: []string{"read_file"}, tool: "READ_FILE", wantRule: "default:not_allowlisted"},
		{name: "quoted as Go quotes", allow: []string{"r\\\"é_*"}, tool: "r\"é_x", wantOK: true, wantRule: `allow:"r\\\"é_*"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPolicy(tt.allow, tt.deny)
			require.NoError(t, err)
			ok, rule := p.Match(tt.tool)
			require.Equal(t, tt.wantOK, ok)
			require.Equal(t, tt.wantRule, rule)
			// A policy whose lists were set after NewPolicy, or that
			// NewPolicy did not build, names the same rules.
			ok, rule = Policy{Allow: tt.allow, Deny: tt.deny}.Match(tt.tool)
			require.Equal(t, tt.wantOK, ok)
			require.Equal(t, tt.wantRule, rule)
		})
	}
}

func TestPolicyMatchNamesAReplacedGlob(t *testing.T) {
	p, err := NewPolicy([]string{"read_*"}, []string{"write_*"})
	require.NoError(t, err)
	p.Allow, p.Deny = []string{"list_*"}, []string{"move_*"}
	ok, rule := p.Match("list_x")
	require.True(t, ok)
	require.Equal(t, `allow:"list_*"`, rule)
	_, rule = p.Match("move_x")
	require.Equal(t, `deny:"move_*"`, rule)
}
