package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/guard/outfilter"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/mcpserver"
	"go.yaml.in/yaml/v3"
)

// benchDir holds the vendored agent-egress-bench corpus (see its NOTICE).
const benchDir = "testdata/agent-egress-bench"

// benchCase is one case of the corpus, as its schemas/case.schema.json
// describes it.
type benchCase struct {
	ID        string   `json:"id"`
	Category  string   `json:"category"`
	InputType string   `json:"input_type"`
	Expected  string   `json:"expected_verdict"`
	Requires  []string `json:"requires"`
	Tags      []string `json:"capability_tags"`
	Payload   struct {
		egressCase
		Messages []struct {
			Method string `json:"method"`
			Params struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"params"`
			Result struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			} `json:"result"`
		} `json:"jsonrpc_messages"`
	} `json:"payload"`
	file string // its path
}

// benchResult is one line of results.jsonl, as the corpus's
// schemas/result.schema.json describes it.
type benchResult struct {
	CaseID      string         `json:"case_id"`
	Tool        string         `json:"tool"`
	ToolVersion string         `json:"tool_version"`
	Expected    string         `json:"expected_verdict"`
	Actual      string         `json:"actual_verdict"`
	Score       string         `json:"score"`
	Evidence    map[string]any `json:"evidence"`
	Notes       string         `json:"notes"`
	category    string
}

// egressPending is the note of a case the runner does not play (none,
// since the egress cases are played through run_script and the proxy).
const egressPending = "not played"

// loadBench reads every vendored case, sorted by category and id.
func loadBench(t *testing.T) []benchCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(benchDir, "cases", "*", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var cases []benchCase
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var c benchCase
		require.NoError(t, json.Unmarshal(b, &c), f)
		c.file, _ = filepath.Abs(f)
		cases = append(cases, c)
	}
	sort.Slice(cases, func(i, j int) bool {
		if cases[i].Category != cases[j].Category {
			return cases[i].Category < cases[j].Category
		}
		return cases[i].ID < cases[j].ID
	})
	return cases
}

// throughUpstream reports whether toolwarden meets the case as an
// upstream MCP server's definitions, results or calls (the rest go out
// through the egress proxy).
func throughUpstream(c benchCase) bool {
	return strings.HasPrefix(c.InputType, "mcp_") || c.InputType == "response_content"
}

// gauntletRig is one toolwarden serving every upstream case, each as its
// own upstream g<N> (a gauntletupstream process playing it).
type gauntletRig struct {
	c     *client.Client
	names map[string]bool   // the tools the client is offered
	why   map[string]string // config check's reason per withheld tool ("upstream:g001 tool x")
}

// upstreamName is the upstream that plays case i.
func upstreamName(i int) string { return fmt.Sprintf("g%03d", i) }

// startGauntlet builds the case player, pins every upstream (the cases
// that need a baseline are pinned at their plain definition, then changed
// to the case's: a rug pull), and serves them all from the built binary,
// in one session. With chain set, the cases are played at the default
// policy.taint; without, taint is off.
func startGauntlet(t *testing.T, cases []benchCase, chain bool) *gauntletRig {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gauntletupstream")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/gauntletupstream").CombinedOutput()
	require.NoError(t, err, "%s", out)
	ws, env := workspace(t)
	env = append(env, "XDG_STATE_HOME="+filepath.Join(filepath.Dir(ws), "state"))
	mode := filepath.Join(t.TempDir(), "mode")
	require.NoError(t, os.WriteFile(mode, []byte("baseline"), 0o644))
	var cfg strings.Builder
	// Every case is played in one session, so policy.taint would carry
	// one case's redacted secret or named credential into every later
	// case: it is off here, but for a chain case, which gets a session
	// (and a server) of its own and the default policy.taint.
	if chain {
		cfg.WriteString("policy:\n  allow: [\"g*\"]\nupstreams:\n")
	} else {
		cfg.WriteString("policy:\n  allow: [\"g*\"]\n  taint: \"off\"\nupstreams:\n")
	}
	for i, c := range cases {
		argv := []string{bin, "--case", c.file}
		if contains(c.Requires, "mcp_tool_baseline") {
			argv = append(argv, "--mode-file", mode)
		}
		q, _ := json.Marshal(argv)
		fmt.Fprintf(&cfg, "  - name: %s\n    command: %s\n    sandbox: false\n", upstreamName(i), q)
	}
	file := upstreamConfig(t, ws, cfg.String())
	pinned, status := runPin(t, env, "--config", file)
	require.Equal(t, 0, status, pinned)
	require.NoError(t, os.WriteFile(mode, []byte("case"), 0o644))

	cmd := exec.Command(binary, "config", "check", "--config", file, "--workspace", ws)
	cmd.Env = env
	check, err := cmd.Output()
	require.NoError(t, err)
	var report struct {
		Unavailable []mcpserver.Unavailable `yaml:"unavailable_toolsets"`
	}
	require.NoError(t, yaml.Unmarshal(check, &report), "%s", check)
	c, listed := serveUpstream(t, ws, env, file)
	r := &gauntletRig{c: c, names: map[string]bool{}, why: map[string]string{}}
	for _, u := range report.Unavailable {
		r.why[u.Toolset] = u.Reason
	}
	for _, n := range listed {
		r.names[n] = true
	}
	return r
}

// chainCase reports whether c is a sequence that needs the session's
// memory of earlier steps: it is played in a session of its own.
func chainCase(c benchCase) bool {
	return c.InputType == "mcp_tool_sequence" && contains(c.Requires, "mcp_chain_memory")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// play runs case i through the rig and returns toolwarden's verdict with
// its evidence: "block" when it withheld, refused, flagged or redacted
// what the case sends, "allow" when it passed it on untouched.
func (r *gauntletRig) play(t *testing.T, i int, c benchCase) (string, map[string]any) {
	t.Helper()
	prefix := upstreamName(i) + "__"
	switch c.InputType {
	case "mcp_tool_definition":
		return r.listing(i, c)
	case "mcp_tool_result":
		return r.called(t, prefix+"search", nil)
	case "response_content":
		return r.called(t, prefix+"fetch", map[string]any{"url": "https://example.com/"})
	}
	var steps []any
	for _, m := range c.Payload.Messages {
		if m.Method != "tools/call" {
			continue
		}
		v, ev := r.called(t, prefix+m.Params.Name, m.Params.Arguments)
		ev["tool"] = m.Params.Name
		steps = append(steps, ev)
		if v == "block" {
			return v, map[string]any{"steps": steps}
		}
	}
	return "allow", map[string]any{"steps": steps}
}

// listing is the verdict on a case's tool definitions: blocked when a
// tool is not offered, with config check's reason.
func (r *gauntletRig) listing(i int, c benchCase) (string, map[string]any) {
	var withheld []string
	for _, tool := range c.Payload.Messages[0].Result.Tools {
		if r.names[upstreamName(i)+"__"+tool.Name] {
			continue
		}
		reason, ok := r.why["upstream:"+upstreamName(i)+" tool "+tool.Name]
		if !ok {
			reason = "not offered"
		}
		withheld = append(withheld, tool.Name+": "+reason)
	}
	if len(withheld) > 0 {
		return "block", map[string]any{"withheld": withheld}
	}
	return "allow", map[string]any{"offered": true}
}

// called calls tool and judges its answer: a denial, or a result whose
// _meta says the filter warned, redacted, defanged or stripped something,
// or that the argument scan found something, is a block.
func (r *gauntletRig) called(t *testing.T, tool string, args map[string]any) (string, map[string]any) {
	t.Helper()
	res := callUpstream(t, r.c, tool, args)
	if res.IsError {
		e, ok := toolerr.FromResult(res)
		require.True(t, ok, "%s: an error that is no toolwarden denial: %+v", tool, res.Content)
		return "block", map[string]any{"denied": string(e.Code)}
	}
	m := filterMeta(t, res)
	ev := map[string]any{}
	for _, k := range []string{"warnings", "redactions", "defanged", "stripped", "controls", "collapsed", "arguments"} {
		if v, ok := m[k]; ok {
			ev[k] = v
		}
	}
	if len(ev) > 0 {
		return "block", ev
	}
	return "allow", map[string]any{"unflagged": true}
}

// filterMeta is a result's _meta["io.toolwarden/output"] as plain data.
func filterMeta(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	require.NotNil(t, res.Meta)
	b, err := json.Marshal(res.Meta.AdditionalFields[outfilter.MetaKey])
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// TestGauntlet plays every vendored agent-egress-bench case through the
// built binary, writes the results in the corpus's own format, checks
// them against its result schema, and compares them and the per-category
// table in docs/security.md with what is committed
// (-update-gauntlet rewrites both).
func TestGauntlet(t *testing.T) {
	t.Parallel()
	cases := loadBench(t)
	var upstream, out []benchCase
	for _, c := range cases {
		switch {
		case chainCase(c):
		case throughUpstream(c):
			upstream = append(upstream, c)
		default:
			out = append(out, c)
		}
	}
	played := playEgress(t, out)
	rig := startGauntlet(t, upstream, false)
	version := toolVersion(t)
	index := map[string]int{}
	for i, c := range upstream {
		index[c.ID] = i
	}
	var results []benchResult
	for _, c := range cases {
		r := benchResult{CaseID: c.ID, Tool: "toolwarden", ToolVersion: version, Expected: c.Expected, category: c.Category}
		switch {
		case chainCase(c):
			r.Actual, r.Evidence = startGauntlet(t, []benchCase{c}, true).play(t, 0, c)
		case throughUpstream(c):
			r.Actual, r.Evidence = rig.play(t, index[c.ID], c)
		default:
			r.Actual, r.Evidence = played[c.ID].Actual, played[c.ID].Evidence
		}
		r.Score = "fail"
		switch {
		case r.Actual == r.Expected:
			r.Score = "pass"
		case r.Actual == "error":
			r.Score = "error"
		}
		results = append(results, r)
	}
	checkResults(t, results)
	if *gauntletDLPOff {
		t.Logf("agent-egress-bench through toolwarden, exec.network.dlp.off:\n%s", gauntletTable(results))
		return
	}
	compareGauntlet(t, results)
}
