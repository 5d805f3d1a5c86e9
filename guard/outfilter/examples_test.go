package outfilter

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Values gitleaks allowlists for looking like examples are credential
// shaped all the same, and redacted (docs/output-filter.md).
func TestExampleValuesAreRedacted(t *testing.T) {
	f := newFilter(t)
	cases := []struct{ name, in, value, rule string }{
		{"AWS documentation key ID", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "aws-access-token"},
		{"password holding the word example", `DB_PASSWORD="Example-Prod-7xQ2vLk9Tz"`, "Example-Prod-7xQ2vLk9Tz", "generic-api-key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rep Report
			got := f.Text(c.in, &rep)
			assert.NotContains(t, got, c.value)
			assert.Equal(t, 1, rep.Redactions[c.rule], "%+v", rep.Redactions)
		})
	}
	// The other allowlist entries still apply.
	var rep Report
	assert.Equal(t, "password: ${DB_PASSWORD}", f.Text("password: ${DB_PASSWORD}", &rep))
	assert.Zero(t, rep.Redacted())
}
