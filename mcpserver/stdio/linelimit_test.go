package stdio

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// TestLineLimitReader checks that no line longer than the limit gets
// through, whatever the read sizes, and that short lines pass in order.
func TestLineLimitReader(t *testing.T) {
	const max = 10
	long := strings.Repeat("x", 100)
	cases := []struct {
		name    string
		in      string
		short   []string // lines that must come through, in order
		dropped bool     // whether the drop notification must appear
	}{
		{"short lines pass", "a\nbb\n", []string{"a", "bb"}, false},
		{"exactly max passes", strings.Repeat("y", max) + "\nz\n", []string{strings.Repeat("y", max), "z"}, false},
		{"long line dropped", "a\n" + long + "\nb\n", []string{"a", "b"}, true},
		{"two long lines", long + "\n" + long + "\nc\n", []string{"c"}, true},
		{"long line without newline", "a\n" + long, []string{"a"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			readers := map[string]io.Reader{
				"whole":    strings.NewReader(tc.in),
				"one byte": iotest.OneByteReader(strings.NewReader(tc.in)),
				"half":     iotest.HalfReader(strings.NewReader(tc.in)),
			}
			for name, r := range readers {
				got, err := io.ReadAll(newLineLimitReader(r, max))
				require.NoError(t, err, name)
				var kept []string
				for _, line := range strings.Split(string(got), "\n") {
					if line == strings.TrimSuffix(string(oversizedLine), "\n") {
						continue
					}
					require.LessOrEqual(t, len(line), max, "%s: line %q too long", name, line)
					if line != "" && !strings.HasPrefix(line, "x") {
						kept = append(kept, line)
					}
				}
				require.Equal(t, tc.short, kept, name)
				require.Equal(t, tc.dropped, strings.Contains(string(got), string(oversizedLine)), name)
			}
		})
	}
}
