package e2e

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
	buildversion "github.com/toolwarden/toolwarden/internal/version"
)

var updateGauntlet = flag.Bool("update-gauntlet", false, "rewrite the gauntlet's results.jsonl and its table in docs/security.md")

const (
	gauntletResults = "testdata/gauntlet/results.jsonl"
	securityDoc     = "../docs/security.md"
	gauntletBegin   = "<!-- gauntlet:begin (written by TestGauntlet, -update-gauntlet) -->\n"
	gauntletEnd     = "<!-- gauntlet:end -->\n"
)

// notApplicable are the corpus's categories that are not vendored, and why.
var notApplicable = [][2]string{
	{"a2a_message", "toolwarden speaks MCP only; it carries no A2A messages"},
	{"a2a_agent_card", "no A2A Agent Cards: toolwarden neither serves nor fetches them"},
	{"websocket_dlp", "no WebSocket transport: the egress proxy tunnels TLS and plain HTTP, it reads no frames"},
	{"crypto_financial", "no detector for wallet addresses, seed phrases, card numbers or IBANs (gitleaks' rules have none)"},
	{"shell_obfuscation", "no shell analysis: commands run in the sandbox, whose reach (files, network) is the control, whatever their spelling"},
}

// containedBy says, per category run, what counts as contained.
var containedBy = map[string]string{
	"mcp_tool":              "definition withheld from tools/list (flagged by the output filter, or changed since its pin); a poisoned result flagged",
	"mcp_input":             "call refused (a secret in the arguments of a tool that sends out) or flagged (markers in the arguments, `_meta` `arguments`)",
	"mcp_chain":             "each case in a session of its own, policy.taint at its default: a step refused or flagged as for mcp_input, or a step that sends out after one that named a credential's variable, an autostart location or a script the session wrote asks a human (which the test's client cannot give: refused)",
	"response_fetch":        "flagged: a warning, a redaction or a defanged image in the result's `_meta` (the text still reaches the model, labelled untrusted)",
	"response_mitm":         "as response_fetch: the body as an upstream tool's output (no TLS interception needed)",
	"encoding_evasion":      "MCP cases as mcp_input; URL cases refused by the egress proxy's data-loss checks (403 `egress.dlp`), decoded from percent-encoding, base64 and hex",
	"false_positive":        "benign: passes with no finding at all (offered, called, not flagged; a URL reaches the local server through the proxy)",
	"url":                   "refused by the egress proxy (403): `egress.dlp` for what the URL carries or its name encodes, the allowlist for a host not listed, `egress.target`/the allowlist for an IP literal",
	"headers":               "refused by the egress proxy's data-loss checks (403 `egress.dlp`), headers scanned before any credential is put in",
	"request_body":          "refused by the egress proxy's data-loss checks (403 `egress.dlp`), the body scanned in windows before it is passed on",
	"hostname_exfiltration": "refused by the egress proxy (403 `egress.dlp`) before the name is looked up: labels of hex, base32 or random data, or too many, below a wildcard entry's domain",
	"ssrf_bypass":           "refused by the egress proxy (403): an IP literal not listed exactly (the allowlist) or not plainly spelt (`egress.target`)",
}

// toolVersion is the built binary's version.
func toolVersion(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(binary, "version", "--json").Output()
	require.NoError(t, err)
	var info buildversion.Info
	require.NoError(t, json.Unmarshal(out, &info))
	return info.Version
}

// checkResults validates every line against the corpus's own result
// schema and its validator's cross-field rule (the score follows the
// verdicts).
func checkResults(t *testing.T, results []benchResult) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(benchDir, "schemas", "result.schema.json"))
	require.NoError(t, err)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("result.schema.json", doc))
	schema, err := c.Compile("result.schema.json")
	require.NoError(t, err)
	for _, r := range results {
		line, err := json.Marshal(r)
		require.NoError(t, err)
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
		require.NoError(t, err)
		require.NoError(t, schema.Validate(inst), "%s", line)
		want := map[bool]string{true: "pass", false: "fail"}[r.Actual == r.Expected]
		if r.Actual == "not_applicable" || r.Actual == "error" {
			want = r.Actual
		}
		require.Equal(t, want, r.Score, "%s", line)
	}
}

// tally is one category's row of the table.
type tally struct {
	cases, attacks, contained, missed, benign, falsePos, pending int
}

// gauntletTable is the per-category table of results, in markdown.
func gauntletTable(results []benchResult) string {
	var order []string
	rows := map[string]*tally{}
	for _, r := range results {
		x := rows[r.category]
		if x == nil {
			x = &tally{}
			rows[r.category] = x
			order = append(order, r.category)
		}
		x.cases++
		switch {
		case r.Actual == "not_applicable":
			x.pending++
		case r.Expected == "block" && r.Actual == "block":
			x.attacks++
			x.contained++
		case r.Expected == "block":
			x.attacks++
			x.missed++
		case r.Actual == "block":
			x.benign++
			x.falsePos++
		default:
			x.benign++
		}
	}
	var b strings.Builder
	b.WriteString("| category | cases | attacks | contained | missed | benign | false positives | containment | contained means |\n")
	b.WriteString("| --- | --: | --: | --: | --: | --: | --: | --: | --- |\n")
	var all tally
	for _, cat := range order {
		x := rows[cat]
		all.attacks += x.attacks
		all.contained += x.contained
		all.benign += x.benign
		all.falsePos += x.falsePos
		all.cases += x.cases
		all.pending += x.pending
		if x.pending == x.cases {
			fmt.Fprintf(&b, "| %s | %d | | | | | | pending | %s |\n", cat, x.cases, egressPending)
			continue
		}
		note := containedBy[cat]
		if x.pending > 0 {
			note += fmt.Sprintf("; %d case(s) %s", x.pending, egressPending)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %s | %s |\n",
			cat, x.cases, x.attacks, x.contained, x.missed, x.benign, x.falsePos, percent(x.contained, x.attacks), note)
	}
	fmt.Fprintf(&b, "| **all run** | %d | %d | %d | %d | %d | %d | %s | %d case(s) pending |\n",
		all.cases-all.pending, all.attacks, all.contained, all.attacks-all.contained, all.benign, all.falsePos,
		percent(all.contained, all.attacks), all.pending)
	b.WriteString("\nNot applicable (not vendored):\n\n")
	for _, na := range notApplicable {
		fmt.Fprintf(&b, "- `%s`: %s.\n", na[0], na[1])
	}
	return b.String()
}

func percent(n, of int) string {
	if of == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(of))
}

// resultsJSONL is the results in the corpus's JSONL format.
func resultsJSONL(t *testing.T, results []benchResult) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, r := range results {
		line, err := json.Marshal(r)
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// compareGauntlet compares the results and the table with the committed
// ones, or rewrites them with -update-gauntlet.
func compareGauntlet(t *testing.T, results []benchResult) {
	t.Helper()
	jsonl := resultsJSONL(t, results)
	table := gauntletTable(results)
	t.Logf("agent-egress-bench through toolwarden:\n%s", table)
	doc, err := os.ReadFile(securityDoc)
	require.NoError(t, err)
	before, rest, ok := strings.Cut(string(doc), gauntletBegin)
	require.True(t, ok, "docs/security.md has no line %q", gauntletBegin)
	_, after, ok := strings.Cut(rest, gauntletEnd)
	require.True(t, ok, "docs/security.md has no line %q", gauntletEnd)
	updated := before + gauntletBegin + table + gauntletEnd + after
	if *updateGauntlet {
		require.NoError(t, os.MkdirAll(filepath.Dir(gauntletResults), 0o755))
		require.NoError(t, os.WriteFile(gauntletResults, jsonl, 0o644))
		require.NoError(t, os.WriteFile(securityDoc, []byte(updated), 0o644))
		return
	}
	committed, err := os.ReadFile(gauntletResults)
	require.NoError(t, err)
	require.Equal(t, string(committed), string(jsonl), "%s is stale: run scripts/bench/gauntlet", gauntletResults)
	require.Equal(t, string(doc), updated, "docs/security.md's gauntlet table is stale: run scripts/bench/gauntlet")
}
