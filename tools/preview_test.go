package tools

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestShellQuote(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"/bin/ls", "-la", "a/b.txt"}, "/bin/ls -la a/b.txt"},
		{[]string{"echo", ""}, "echo ''"},
		{[]string{"echo", "$(id)", "`id`", "a;b", "*"}, "echo '$(id)' '`id`' 'a;b' '*'"},
		{[]string{"echo", "it's"}, `echo 'it'\''s'`},
		{[]string{"echo", "a\nb\tc\r", `back\slash'`}, `echo $'a\nb\tc\r' 'back\slash'\'''`},
		{[]string{"echo", "\x1b[2Jx", "\xff\xfe", "\u202e", "\U000e0041", "héllo"}, `echo $'\x1b[2Jx' $'\xff\xfe' $'\u202e' $'\U000e0041' 'héllo'`},
	} {
		require.Equal(t, c.want, ShellQuote(c.argv), "%q", c.argv)
	}
}
