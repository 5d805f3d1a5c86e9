// Command rawload measures MCP tool-call latency with no MCP client library
// in the measured path: it writes newline-delimited JSON-RPC to a stdio
// server's pipes, or plain HTTP POSTs to a streamable-HTTP endpoint, and
// matches answers by id. With several --target flags it runs the targets
// alternately in rounds (each server started once and kept warm; each
// round starts one target later than the one before, so that none always
// follows the same one) and prints each round's p50/p99 ratio to the
// first target, then the medians.
//
//	rawload --target tw=stdio:"toolwarden serve --workspace /ws" \
//	        --target bare=stdio:"bareserver --root /ws" \
//	        --tool read_file --args '{"path":"bench.txt"}' --rounds 5 --n 2000
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"
)

// config is the parsed command line.
type config struct {
	targets     []targetSpec
	tool        string // default for every target
	args        string // default for every target
	n, warmup   int
	rounds      int
	concurrency int
	protocol    string
	token       string
	timeout     time.Duration
	childStderr bool
	jsonOut     bool
	// ratios are extra pairs of targets whose per-round ratios are
	// summarized (--ratio NUM/DEN), beside each target's to the first.
	ratios []ratioSpec
}

// ratioSpec is one --ratio NUM/DEN, as indexes into the targets.
type ratioSpec struct{ num, den int }

// targetSpec is one --target NAME=stdio:CMD or NAME=http:URL, with the
// tool and arguments it is called with (--tool/--args unless overridden by
// --target-tool/--target-args NAME=...).
type targetSpec struct{ name, kind, addr, tool, args string }

// overrides is a repeatable NAME=VALUE flag.
type overrides map[string]string

func (o overrides) String() string { return fmt.Sprint(len(o)) }

func (o overrides) Set(v string) error {
	name, val, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", v)
	}
	o[name] = val
	return nil
}

type targetFlags []targetSpec

func (t *targetFlags) String() string { return fmt.Sprint(len(*t)) }

func (t *targetFlags) Set(v string) error {
	name, rest, ok := strings.Cut(v, "=")
	kind, addr, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || name == "" || addr == "" || (kind != "stdio" && kind != "http") {
		return fmt.Errorf("want NAME=stdio:COMMAND or NAME=http:URL, got %q", v)
	}
	*t = append(*t, targetSpec{name: name, kind: kind, addr: addr})
	return nil
}

func parseFlags() config {
	var cfg config
	var targets targetFlags
	toolFor, argsFor := overrides{}, overrides{}
	flag.Var(&targets, "target", "NAME=stdio:COMMAND (split on spaces) or NAME=http:URL; repeat to compare")
	flag.Var(toolFor, "target-tool", "NAME=TOOL: call TOOL on that target instead of --tool (repeatable)")
	flag.Var(argsFor, "target-args", "NAME=JSON: that target's arguments instead of --args (repeatable)")
	flag.StringVar(&cfg.tool, "tool", "read_file", "tool to call")
	flag.StringVar(&cfg.args, "args", `{"path":"bench.txt"}`, "tool arguments (a JSON object)")
	flag.IntVar(&cfg.n, "n", 2000, "measured calls per target per round")
	flag.IntVar(&cfg.warmup, "warmup", 200, "unmeasured calls per target before the first round")
	flag.IntVar(&cfg.rounds, "rounds", 5, "alternating rounds")
	flag.IntVar(&cfg.concurrency, "concurrency", 1, "calls in flight per target")
	flag.StringVar(&cfg.protocol, "protocol", "2025-11-25", "protocol revision: 2025-11-25 (initialize + session) or 2026-07-28 (per-request _meta, no handshake)")
	flag.StringVar(&cfg.token, "token", os.Getenv("RAWLOAD_TOKEN"), "HTTP bearer token")
	flag.DurationVar(&cfg.timeout, "timeout", 30*time.Second, "per call")
	flag.BoolVar(&cfg.childStderr, "child-stderr", false, "show the stdio servers' stderr")
	flag.BoolVar(&cfg.jsonOut, "json", false, "print one JSON object per target with the medians")
	var ratios ratioFlags
	flag.Var(&ratios, "ratio", "NUM/DEN: also print the medians of target NUM's per-round ratios to target DEN's (repeatable)")
	flag.Parse()
	for _, t := range targets {
		t.tool, t.args = cmp.Or(toolFor[t.name], cfg.tool), cmp.Or(argsFor[t.name], cfg.args)
		cfg.targets = append(cfg.targets, t)
	}
	var err error
	if cfg.ratios, err = ratios.resolve(cfg.targets); err != nil {
		log.Fatal(err)
	}
	return cfg
}

// ratioFlags are the --ratio flags as given, NUM/DEN target names.
type ratioFlags [][2]string

func (r *ratioFlags) String() string { return fmt.Sprint(len(*r)) }

func (r *ratioFlags) Set(v string) error {
	num, den, ok := strings.Cut(v, "/")
	if !ok || num == "" || den == "" {
		return fmt.Errorf("want NUM/DEN (two target names), got %q", v)
	}
	*r = append(*r, [2]string{num, den})
	return nil
}

// resolve finds each pair's targets.
func (r ratioFlags) resolve(targets []targetSpec) ([]ratioSpec, error) {
	index := func(name string) int {
		return slices.IndexFunc(targets, func(t targetSpec) bool { return t.name == name })
	}
	var out []ratioSpec
	for _, p := range r {
		num, den := index(p[0]), index(p[1])
		if num < 0 || den < 0 {
			return nil, fmt.Errorf("--ratio %s/%s: no such target", p[0], p[1])
		}
		out = append(out, ratioSpec{num, den})
	}
	return out, nil
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("rawload: ")
	cfg := parseFlags()
	if len(cfg.targets) == 0 || cfg.n < 1 || cfg.rounds < 1 || cfg.concurrency < 1 {
		log.Fatal("need at least one --target, and --n, --rounds, --concurrency ≥ 1")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		log.Fatal(err)
	}
}

// run connects every target, warms each up, then measures in rounds.
func run(ctx context.Context, cfg config) error {
	conns := make([]conn, 0, len(cfg.targets))
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for _, t := range cfg.targets {
		c, err := dial(ctx, cfg, t)
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		conns = append(conns, c)
		if _, err := load(ctx, cfg, t, c, cfg.warmup); err != nil {
			return fmt.Errorf("%s: warm-up: %w", t.name, err)
		}
	}
	rounds := make([][]stats, len(conns))
	for r := 0; r < cfg.rounds; r++ {
		for _, i := range roundOrder(len(conns), r) {
			c := conns[i]
			var st stats
			cpu, err := cpuPerCall(c, cfg.n, func() (err error) {
				st, err = load(ctx, cfg, cfg.targets[i], c, cfg.n)
				return err
			})
			st.CPUus = cpu
			if err != nil {
				return fmt.Errorf("%s: round %d: %w", cfg.targets[i].name, r+1, err)
			}
			rounds[i] = append(rounds[i], st)
		}
		printRound(os.Stdout, cfg, r+1, rounds)
	}
	printSummary(os.Stdout, cfg, rounds)
	return nil
}

// dial starts or connects to one target.
func dial(ctx context.Context, cfg config, t targetSpec) (conn, error) {
	if t.kind == "http" {
		return dialHTTP(ctx, cfg, t.addr, t.tool)
	}
	return dialStdio(ctx, cfg, t.addr)
}

// roundOrder is the order round r (from 0) calls n targets in: each round
// starts one target later than the one before, so that over n rounds
// each target runs once in each place (first after the pause between
// rounds, last after all the others) and no server gains or loses from
// always following the same one.
func roundOrder(n, r int) []int {
	order := make([]int, n)
	for k := range order {
		order[k] = (r + k) % n
	}
	return order
}
