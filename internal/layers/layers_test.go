package layers

import (
	"os/exec"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/toolwarden/toolwarden/"

// leaves hold rules several layers share; they import no toolwarden
// package but internal/toolerr, so any layer may use them.
var leaves = []string{"internal/toolerr", "internal/capability", "internal/workspacepath", "internal/artifactkey", "internal/structured",
	"internal/strictjson", "internal/money", "internal/outersandbox", "internal/rpcerr", "internal/lazyregexp"}

// toolDeps is what a tool package builds on.
var toolDeps = with(leaves, "tools", "configs", "sandbox", "internal/tracing")

// mayImport is the one table of allowed arrows: each package of the module
// (a key may be a path.Match pattern) and the toolwarden packages it may
// import, as patterns too. A package with no row fails the test, so a new
// package takes a place in the layering when it is added. Only what a
// package's non-test files import counts: tests may reach across.
var mayImport = map[string][]string{
	// Parses flags and calls one entry point per subcommand; the wiring
	// is mcpserver's (Serve and the other app*.go entry points).
	"cmd/toolwarden": {"mcpserver", "configs", "tools/declared", "audit/ship", "approvals/socket", "bridge", "internal/version", "internal/money"},
	// The binary's black-box tests: only doc.go is not a test file.
	"e2e": nil,
	// The server and the one composition root: the guard around the
	// tools, backends, catalog and approvals; Serve opens the audit log,
	// its shippers and anchors, the observers and the approval channels
	// around it. Its transports are packages below it; the strict
	// JSON-RPC check is theirs.
	"mcpserver": with(leaves, "guard", "guard/outfilter", "tools", "tools/*", "configs", "sandbox",
		"internal/oauth", "approvals", "approvals/*", "internal/tracing", "internal/clusterstate", "tools/upstream/pin",
		"audit", "audit/ship", "internal/metrics", "internal/version", "egress",
		"mcpserver/internal/wire", "mcpserver/stdio", "mcpserver/httpserve"),
	// Writes tool results' JSON-RPC answers in one pass (both transports).
	"mcpserver/internal/wire": {"internal/structured"},
	// Writes one request's notifications before its answer (both
	// transports).
	"mcpserver/internal/relay": {},
	// The stdio transport: hands requests to mcp-go's server, never to
	// mcpserver, which builds that server and imports the transport.
	"mcpserver/stdio": {"internal/jsonrpcstrict", "mcpserver/internal/wire", "mcpserver/internal/relay", "internal/rpcerr"},
	// The HTTP transports (streamable, legacy SSE), likewise: the server
	// is handed to it as mcp-go's server and a few hooks.
	"mcpserver/httpserve": with(leaves, "configs", "internal/jsonrpcstrict", "internal/oauth", "internal/tracing",
		"mcpserver/internal/wire", "mcpserver/internal/relay", "internal/hostcheck"),
	"bridge": leaves,
	"guard":  with(leaves, "guard/outfilter", "audit", "internal/jsonenc"),
	// The hash-chained audit log: append, rotate, verify, torn tails.
	"audit": {"internal/jsonenc"},
	// Reads audit logs in tests (the packages' shared test helper).
	"audit/audittest": {"audit"},
	// Ships audit lines to syslog and OTLP and anchors the chain head to S3.
	"audit/ship": with(leaves, "audit", "configs"),
	// An OTLP/HTTP logs receiver for tests (the shipper's and e2e's).
	"audit/ship/otlptest": nil,
	// The approval hub and its channels (page, terminal socket, webhook).
	"approvals":         nil,
	"approvals/page":    {"approvals"},
	"approvals/socket":  {"approvals", "internal/strictjson"},
	"approvals/webhook": {"approvals", "internal/strictjson"},
	"tools/artifacts":   toolDeps,
	"tools/exec":        toolDeps,
	"tools/fs":          toolDeps,
	"tools/git":         toolDeps,
	"tools/graph":       toolDeps,
	// Declared cli tools with go_cache run with go scripts' toolchain.
	"tools/declared": with(toolDeps, "tools/exec"),
	"tools/upstream": with(toolDeps, "tools/upstream/pin"),
	// The conformance suite's fixture tools, in test builds only (tag
	// conformance): a tool package like the others.
	"tools/conformance": toolDeps,
	// Pins upstream tool definitions by digest; reads and diffs the pins file.
	"tools/upstream/pin": nil,
	"tools":              leaves,
	"sandbox":            leaves,
	"egress":             with(leaves, "configs"),
	"egress/egresstest":  nil,
	"configs":            leaves,
	"guard/outfilter":    {"internal/structured"},
	// The replicas' shared usage and approval state, in Redis/Valkey.
	"internal/clusterstate": with(leaves, "guard", "approvals"),
	// Counts calls, decisions and sandbox runs for Prometheus (the guard's
	// Observer, a sandbox.Runner wrapper).
	"internal/metrics": {"guard", "sandbox", "internal/version", "internal/hostcheck"},
	// Refuses HTTP requests whose Host a DNS-rebinding page sent (the MCP
	// and metrics listeners); loopback as configs decides it.
	"internal/hostcheck": {"configs"},
	// OpenTelemetry spans of calls and of the sandbox runs, S3 and Neo4j
	// requests they make; tools use it, so it imports no tool.
	"internal/tracing": {"sandbox"},
	// The strict JSON-RPC pre-check both transports run.
	"internal/jsonrpcstrict": nil,
	// Validates OAuth access tokens; knows nothing of MCP or the guard.
	"internal/oauth": {"internal/strictjson"},
	// A fake identity provider for the OAuth tests, in process and e2e.
	"internal/oauth/oauthtest": nil,
	"internal/toolerr":         nil,
	// Regular expressions compiled at first use, not at start-up.
	"internal/lazyregexp":    nil,
	"internal/capability":    nil,
	"internal/workspacepath": {"internal/toolerr"},
	"internal/artifactkey":   {"internal/toolerr"},
	// A tool's structured output with its JSON, encoded once.
	"internal/structured": nil,
	// Decodes bodies from outside strictly (exact, unique member names).
	"internal/strictjson": nil,
	// The sandbox around the server, for error messages.
	"internal/outersandbox": nil,
	// A handler's own JSON-RPC error, written by the transports.
	"internal/rpcerr": nil,
	// JSON encoders byte for byte as encoding/json (audit lines, digests).
	"internal/jsonenc": nil,
	// Renders docs/tools.md from the catalog's tool definitions.
	"internal/tooldoc": {"tools"},
	// The build's version, commit and date (-ldflags -X or the toolchain's).
	"internal/version": nil,
	// Checks the relative links of README.md and docs/*.md (a test's helper).
	"internal/doclinks": nil,
	// The model APIs' stand-ins share llmfake's recorder.
	"internal/llmfake/*": {"internal/llmfake"},
	"internal/*":         nil,
	// The start-up and footprint benchmarks share their stdio handshake.
	"scripts/bench/startload":         {"scripts/bench/internal/stdiorpc"},
	"scripts/bench/footprint":         {"scripts/bench/internal/stdiorpc"},
	"scripts/bench/internal/stdiorpc": nil,
	"scripts/*/*":                     nil,
	// Prepares go scripts' GOCACHE where the server would (sandbox-setup).
	"scripts/gocache": {"configs", "mcpserver", "tools/exec"},
	"scripts/*":       nil,
}

// mayNotDependOn names third-party modules a package must not pull in,
// directly or not, and why: the cost a wrong-way import used to carry.
var mayNotDependOn = []struct{ pkg, dep, why string }{
	{"configs", "github.com/zricethezav/gitleaks/", "loading a config needs no secret-scanning rule set (guard's)"},
	{"tools/graph", "github.com/minio/minio-go/", "the graph tools need artifact keys, not an S3 client"},
	{"tools/fs", "github.com/minio/minio-go/", "the file tools need no S3 client"},
	{"internal/capability", "github.com/zricethezav/gitleaks/", "the capability grammar is a leaf"},
	{"audit", "github.com/zricethezav/gitleaks/", "the audit log writes lines; it filters nothing"},
}

func with(base []string, more ...string) []string { return append(slices.Clone(base), more...) }

type pkg struct {
	path    string   // relative to the module
	imports []string // the module's packages it imports, relative
	deps    []string // every package it depends on, full paths
}

var goList = sync.OnceValues(func() ([]byte, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, err
	}
	return exec.Command(goBin, "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", module+"...").Output()
})

// listModule runs go list over the module (once) and returns its packages.
// Without the go command the test fails: a layering check that cannot
// look is not a pass.
func listModule(t *testing.T) []pkg {
	t.Helper()
	out, err := goList()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderrOf(err))
	}
	var pkgs []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "|", 3)
		if len(parts) != 3 {
			t.Fatalf("go list printed %q", line)
		}
		p := pkg{path: strings.TrimPrefix(parts[0], module), deps: strings.Fields(parts[2])}
		for _, imp := range strings.Fields(parts[1]) {
			if rel, ok := strings.CutPrefix(imp, module); ok {
				p.imports = append(p.imports, rel)
			}
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// allowedFor returns the row of mayImport that p falls under.
func allowedFor(p string) ([]string, bool) {
	if row, ok := mayImport[p]; ok {
		return row, true
	}
	for pattern, row := range mayImport {
		if ok, _ := path.Match(pattern, p); ok {
			return row, true
		}
	}
	return nil, false
}

func matchesAny(patterns []string, p string) bool {
	return slices.ContainsFunc(patterns, func(pattern string) bool {
		ok, _ := path.Match(pattern, p)
		return ok
	})
}

// TestImportsPointDownward fails on any import the table does not allow,
// naming the arrow and the row to change if the arrow is meant.
func TestImportsPointDownward(t *testing.T) {
	pkgs := listModule(t)
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages; is the module root right?", len(pkgs))
	}
	for _, p := range pkgs {
		row, ok := allowedFor(p.path)
		if !ok {
			t.Errorf("package %s has no row in mayImport; give it a place in the layering", p.path)
			continue
		}
		for _, imp := range p.imports {
			if !matchesAny(row, imp) {
				t.Errorf("forbidden import: %s → %s (%s may import only %v)", p.path, imp, p.path, row)
			}
		}
	}
}

// TestTableNamesRealPackages keeps the table honest: a row for a package
// that no longer exists is a stale rule.
func TestTableNamesRealPackages(t *testing.T) {
	pkgs := listModule(t)
	for key := range mayImport {
		if !slices.ContainsFunc(pkgs, func(p pkg) bool { ok, _ := path.Match(key, p.path); return ok }) {
			t.Errorf("mayImport has a row for %q, which matches no package", key)
		}
	}
}

// TestNoHeavyDependencies fails when a package pulls in, at any depth, a
// module it has no use for.
func TestNoHeavyDependencies(t *testing.T) {
	pkgs := listModule(t)
	for _, rule := range mayNotDependOn {
		i := slices.IndexFunc(pkgs, func(p pkg) bool { return p.path == rule.pkg })
		if i < 0 {
			t.Errorf("mayNotDependOn names %s, which is not a package", rule.pkg)
			continue
		}
		for _, d := range pkgs[i].deps {
			if strings.HasPrefix(d, rule.dep) {
				t.Errorf("%s depends on %s: %s", rule.pkg, d, rule.why)
				break
			}
		}
	}
}
