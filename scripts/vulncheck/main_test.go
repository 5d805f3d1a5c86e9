package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// stream is govulncheck -format json output trimmed to findings (positions
// dropped): one vulnerability only imported, two called.
const stream = `{"config": {"scanner_name": "govulncheck", "scan_level": "symbol"}}
{"finding": {"osv": "GO-2026-5841", "fixed_version": "v1.18.7", "trace": [{"module": "github.com/klauspost/compress", "version": "v1.18.0"}]}}
{"finding": {"osv": "GO-2026-6911", "trace": [{"module": "github.com/mark3labs/mcp-go", "version": "v1.2.1"}]}}
{"finding": {"osv": "GO-2026-6607", "fixed_version": "v1.26.9", "trace": [{"module": "stdlib", "version": "v1.26.8"}]}}
{"finding": {"osv": "GO-2026-6607", "fixed_version": "v1.26.9", "trace": [{"module": "stdlib", "version": "v1.26.8", "package": "crypto/tls", "function": "Write", "receiver": "*Conn"}]}}
{"finding": {"osv": "GO-2026-6911", "trace": [{"module": "github.com/mark3labs/mcp-go", "version": "v1.2.1", "package": "github.com/mark3labs/mcp-go/client/transport", "function": "NewStreamableHTTP"}]}}
{"finding": {"osv": "GO-2026-6607", "fixed_version": "v1.26.9", "trace": [{"module": "stdlib", "version": "v1.26.8", "package": "crypto/tls", "function": "Read", "receiver": "*Conn"}]}}
`

func TestCalledVulns(t *testing.T) {
	got, err := calledVulns(strings.NewReader(stream))
	require.NoError(t, err)
	require.Equal(t, map[string]called{
		"GO-2026-6607": {module: "stdlib", version: "v1.26.8", fixed: "v1.26.9", symbol: "crypto/tls.Conn.Write"},
		"GO-2026-6911": {module: "github.com/mark3labs/mcp-go", version: "v1.2.1", symbol: "github.com/mark3labs/mcp-go/client/transport.NewStreamableHTTP"},
	}, got, "the imported-only GO-2026-5841 is not a called vulnerability")

	_, err = calledVulns(strings.NewReader(`{"finding": {`))
	require.Error(t, err, "truncated output is an error, not a clean scan")
}

func TestReport(t *testing.T) {
	vulns, err := calledVulns(strings.NewReader(stream))
	require.NoError(t, err)
	cases := []struct {
		name     string
		accepted string
		ok       bool
		want     []string
	}{
		{"nothing accepted fails", "", false, []string{
			"VULNERABLE GO-2026-6607 stdlib@v1.26.8 (fixed in v1.26.9), calls crypto/tls.Conn.Write",
			"VULNERABLE GO-2026-6911 github.com/mark3labs/mcp-go@v1.2.1 (fixed in no fixed version)",
			"2 called vulnerabilities, 0 accepted, 2 not"}},
		{"one accepted still fails", "GO-2026-6911 mitigated in bridge\n", false, []string{
			"ACCEPTED GO-2026-6911", ": mitigated in bridge", "VULNERABLE GO-2026-6607"}},
		{"all accepted passes, and says so", "# comment\nGO-2026-6911 mitigated\nGO-2026-6607 needs go1.26.9 # toolchain\n", true, []string{
			"ACCEPTED GO-2026-6607", ": needs go1.26.9", "2 called vulnerabilities, 2 accepted, 0 not"}},
		{"a stale entry is named", "GO-2026-6911 m\nGO-2026-6607 n\nGO-2020-0001 old\n", true, []string{
			"STALE accepted GO-2020-0001"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			acc, err := parseAccepted(strings.NewReader(c.accepted))
			require.NoError(t, err)
			var out strings.Builder
			require.Equal(t, c.ok, report(&out, vulns, acc), out.String())
			for _, w := range c.want {
				require.Contains(t, out.String(), w)
			}
		})
	}
}

func TestAcceptedNeedsReason(t *testing.T) {
	_, err := parseAccepted(strings.NewReader("GO-2026-6911 ok\nGO-2026-6607\n"))
	require.ErrorContains(t, err, "line 2: GO-2026-6607 has no reason")
}
