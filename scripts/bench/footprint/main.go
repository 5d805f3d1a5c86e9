// Command footprint measures what MCP servers hold in memory at idle: it
// starts each server over stdio (its input kept open), does the handshake
// and tools/list as a client does, optionally makes one tools/call, waits
// an idle time, then reads the proportional set size (PSS, from
// /proc/PID/smaps_rollup) of the server's process and of every process it
// started (sandboxes, warm pools), and stops it.
//
// With --http targets it also measures what idle streamable HTTP sessions
// cost: it starts the server on a free loopback port, reads its PSS, opens
// --sessions sessions (initialize, then notifications/initialized, each on
// its own), waits the idle time and reads the PSS again; the difference
// over the number of sessions is the cost of one.
//
// Servers run one at a time in alternating rounds; the table gives the
// median of the rounds.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

// named is a NAME=VALUE flag, repeated.
type named []struct{ name, value string }

func (n *named) String() string { return fmt.Sprint(*n) }

func (n *named) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || name == "" || strings.TrimSpace(value) == "" {
		return errors.New("want NAME=VALUE")
	}
	*n = append(*n, struct{ name, value string }{name, value})
	return nil
}

func (n named) get(name string) string {
	for _, e := range n {
		if e.name == name {
			return e.value
		}
	}
	return ""
}

func main() {
	var stdio, http, calls named
	flag.Var(&stdio, "target", "NAME=COMMAND: a stdio server (repeat)")
	flag.Var(&http, "http", "NAME=COMMAND: an HTTP server; the listen address is appended to COMMAND (repeat)")
	flag.Var(&calls, "call", `NAME=PARAMS: tools/call params for target NAME before the idle wait, e.g. {"name":"run_script","arguments":{...}}`)
	rounds := flag.Int("rounds", 3, "alternating rounds")
	idle := flag.Duration("idle", 10*time.Second, "idle wait before reading memory")
	sessions := flag.Int("sessions", 1000, "idle sessions opened on each --http server")
	token := flag.String("token", os.Getenv("FOOTPRINT_TOKEN"), "HTTP bearer token")
	flag.Parse()
	if len(stdio)+len(http) == 0 || *rounds < 1 {
		fmt.Fprintln(os.Stderr, "footprint: at least one --target or --http, and --rounds >= 1")
		os.Exit(2)
	}
	if err := run(stdio, http, calls, *rounds, *idle, *sessions, *token); err != nil {
		fmt.Fprintln(os.Stderr, "footprint:", err)
		os.Exit(1)
	}
}

func run(stdio, http, calls named, rounds int, idle time.Duration, sessions int, token string) error {
	idles := make([][]idleMemory, len(stdio))
	costs := make([][]sessionCost, len(http))
	for r := range rounds {
		for k := range stdio {
			i := (r + k) % len(stdio)
			m, err := idleOnce(stdio[i].value, calls.get(stdio[i].name), idle)
			if err != nil {
				return fmt.Errorf("%s, round %d: %w", stdio[i].name, r+1, err)
			}
			fmt.Printf("round %d  %-18s own %7.1f MB (anonymous %5.1f)  started %2d processes %7.1f MB\n",
				r+1, stdio[i].name, mb(m.own), mb(m.ownAnon), m.children, mb(m.childPSS))
			idles[i] = append(idles[i], m)
		}
		for k := range http {
			i := (r + k) % len(http)
			c, err := sessionsOnce(http[i].value, token, sessions, idle)
			if err != nil {
				return fmt.Errorf("%s, round %d: %w", http[i].name, r+1, err)
			}
			fmt.Printf("round %d  %-18s %d sessions: %7.1f -> %7.1f MB PSS, %7.1f -> %7.1f MB RSS\n",
				r+1, http[i].name, sessions, mb(c.before.pss), mb(c.after.pss), mb(c.before.rss), mb(c.after.rss))
			costs[i] = append(costs[i], c)
		}
	}
	reportIdle(os.Stdout, stdio, idles)
	reportSessions(os.Stdout, http, costs, sessions)
	return nil
}

// mb is kB as MB (10^6 bytes).
func mb(kB int64) float64 { return float64(kB) * 1024 / 1e6 }
