// Command startload measures how long MCP servers take from spawn to their
// tools/list answer over stdio, as an IDE that starts one server per
// window waits for it: each start writes initialize, waits for its answer,
// sends notifications/initialized and tools/list, and stops the clock at
// that answer. The server's input is then closed and its exit waited for,
// so that no server's teardown overlaps the next one's start.
//
// The servers are started in alternating rounds (each round beginning one
// server later than the one before); it prints each start, then per server
// the median and range, the median of its per-round ratios to the first
// server, and the CPU time the whole process used (start to exit).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

// target is one server: a name and the command that starts it (split on
// white space; prefix it with env for variables).
type target struct{ name, command string }

type targets []target

func (t *targets) String() string { return fmt.Sprint(*t) }

func (t *targets) Set(v string) error {
	name, command, ok := strings.Cut(v, "=")
	if !ok || name == "" || strings.TrimSpace(command) == "" {
		return errors.New("want NAME=COMMAND")
	}
	*t = append(*t, target{name, command})
	return nil
}

func main() {
	var ts targets
	flag.Var(&ts, "target", "NAME=COMMAND: a stdio server (repeat; the first is the ratios' base)")
	rounds := flag.Int("rounds", 9, "alternating rounds")
	warmup := flag.Int("warmup", 1, "unmeasured starts of each server first (page cache, runtime state)")
	timeout := flag.Duration("timeout", 30*time.Second, "the most one start, or one exit, may take")
	quiet := flag.Bool("quiet", false, "print only the summary")
	call := flag.String("call", "", `tools/call params (JSON) to send after tools/list, timing the first call: {"name":"read_file","arguments":{"path":"hello.txt"}}`)
	flag.Parse()
	if len(ts) == 0 || *rounds < 1 {
		fmt.Fprintln(os.Stderr, "startload: at least one --target and --rounds >= 1")
		os.Exit(2)
	}
	if err := run(ts, *call, *rounds, *warmup, *timeout, *quiet); err != nil {
		fmt.Fprintln(os.Stderr, "startload:", err)
		os.Exit(1)
	}
}

func run(ts targets, call string, rounds, warmup int, timeout time.Duration, quiet bool) error {
	for range warmup {
		for _, t := range ts {
			if _, err := startOnce(t.command, call, timeout); err != nil {
				return fmt.Errorf("%s (warm-up): %w", t.name, err)
			}
		}
	}
	got := make([][]start, len(ts))
	for r := range rounds {
		for k := range ts {
			i := (r + k) % len(ts)
			s, err := startOnce(ts[i].command, call, timeout)
			if err != nil {
				return fmt.Errorf("%s, round %d: %w", ts[i].name, r+1, err)
			}
			got[i] = append(got[i], s)
			if !quiet {
				fmt.Printf("round %d  %-16s tools/list %7.1f ms  (%d tools)  first call %6.1f ms  exit %7.1f ms  cpu %6.1f ms\n",
					r+1, ts[i].name, ms(s.list), s.tools, ms(s.call), ms(s.exit), ms(s.cpu))
			}
		}
	}
	report(os.Stdout, ts, got, call != "")
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
