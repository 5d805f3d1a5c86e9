// Command mcpload is a small load generator for MCP servers.
//
// It connects to any MCP server, either by spawning a command and speaking
// JSON-RPC over its stdio, or over the streamable-HTTP transport, initializes
// the session with mcp-go's client and then issues a fixed number of
// tools/call requests for a single tool, reporting latency percentiles and
// throughput.
//
// Examples:
//
//	mcpload --cmd "./bareserver --root /tmp/ws" --tool read_file --args '{"path":"bench.txt"}'
//	mcpload --url http://127.0.0.1:8080/mcp --token secret --tool read_file --n 5000 --concurrency 8 --json
//
// A call counts as an error when the transport fails or when the tool result
// has isError=true. The process exits non-zero when initialization fails or
// when every measured call fails.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// config holds the parsed command-line options.
type config struct {
	cmd         string
	env         []string
	url         string
	token       string
	tool        string
	args        map[string]any
	warmup      int
	n           int
	concurrency int
	jsonOut     bool
	timeout     time.Duration
	protocol    string
	childStderr bool
}

// envFlag collects repeated --env K=V values.
type envFlag []string

func (e *envFlag) String() string { return strings.Join(*e, ",") }

func (e *envFlag) Set(v string) error {
	if !strings.Contains(v, "=") {
		return fmt.Errorf("expected K=V, got %q", v)
	}
	*e = append(*e, v)
	return nil
}

func main() {
	os.Exit(run())
}

// run executes the whole benchmark and returns the process exit code.
func run() int {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpload:", err)
		return 2
	}
	ctx := context.Background()
	c, err := connect(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpload: initialize:", err)
		return 1
	}
	defer func() { _ = c.Close() }()

	b := &bench{client: c, cfg: cfg}
	b.run(ctx, cfg.warmup)
	res := b.run(ctx, cfg.n)
	st := summarize(res.latencies, res.elapsed)
	report(os.Stdout, cfg, st, res.errors)
	if res.errors >= cfg.n {
		fmt.Fprintln(os.Stderr, "mcpload: all calls failed")
		return 1
	}
	return 0
}

// parseFlags parses and validates the command line.
func parseFlags(argv []string) (config, error) {
	var cfg config
	var env envFlag
	var rawArgs string
	fs := flag.NewFlagSet("mcpload", flag.ContinueOnError)
	fs.StringVar(&cfg.cmd, "cmd", "", `server command for stdio, split on whitespace (e.g. "prog -a b")`)
	fs.Var(&env, "env", "extra K=V environment for the --cmd child (repeatable)")
	fs.StringVar(&cfg.url, "url", "", "streamable-HTTP endpoint, e.g. http://127.0.0.1:8080/mcp")
	fs.StringVar(&cfg.token, "token", os.Getenv("MCPLOAD_TOKEN"), "bearer token for --url (default $MCPLOAD_TOKEN)")
	fs.StringVar(&cfg.tool, "tool", "", "tool name to call (required)")
	fs.StringVar(&rawArgs, "args", "{}", "tool arguments as a JSON object")
	fs.IntVar(&cfg.warmup, "warmup", 100, "unmeasured warm-up calls")
	fs.IntVar(&cfg.n, "n", 2000, "measured calls")
	fs.IntVar(&cfg.concurrency, "concurrency", 1, "concurrent workers")
	fs.BoolVar(&cfg.jsonOut, "json", false, "print one JSON object instead of a table")
	fs.DurationVar(&cfg.timeout, "timeout", 30*time.Second, "per-call timeout (also bounds initialization)")
	fs.StringVar(&cfg.protocol, "protocol", "", "pin the MCP protocol version (default: negotiate)")
	fs.BoolVar(&cfg.childStderr, "child-stderr", false, "mirror the --cmd child's stderr to ours")
	if err := fs.Parse(argv); err != nil {
		return cfg, err
	}
	cfg.env = env
	cfg.cmd = strings.TrimSpace(cfg.cmd)
	if err := json.Unmarshal([]byte(rawArgs), &cfg.args); err != nil || cfg.args == nil {
		return cfg, fmt.Errorf("--args must be a JSON object: %q", rawArgs)
	}
	return cfg, validate(cfg)
}

// validate checks option combinations that flag parsing cannot express.
func validate(cfg config) error {
	switch {
	case (cfg.cmd == "") == (cfg.url == ""):
		return errors.New("exactly one of --cmd or --url is required")
	case cfg.tool == "":
		return errors.New("--tool is required")
	case cfg.n < 1:
		return errors.New("--n must be >= 1")
	case cfg.warmup < 0:
		return errors.New("--warmup must be >= 0")
	case cfg.concurrency < 1:
		return errors.New("--concurrency must be >= 1")
	}
	return nil
}

// target describes what is being benchmarked, for the report.
func (cfg config) target() string {
	if cfg.url != "" {
		return cfg.url
	}
	return "stdio:" + cfg.cmd
}

// callRequest builds the tools/call request issued on every iteration.
func (cfg config) callRequest() mcp.CallToolRequest {
	var req mcp.CallToolRequest
	req.Params.Name = cfg.tool
	req.Params.Arguments = cfg.args
	return req
}

// clientOptions returns the mcp-go client options derived from the config.
func (cfg config) clientOptions() []client.ClientOption {
	if cfg.protocol == "" {
		return nil
	}
	return []client.ClientOption{client.WithProtocolVersion(cfg.protocol)}
}
