// Command replicaload holds many client connections open to one MCP
// endpoint (a load balancer in front of toolwarden replicas) for a fixed
// time, each making stateless (2026-07-28) tools/call requests one after
// another, and reports calls/s, p50/p99 latency and the errors by kind.
// Unlike rawload, an error does not stop the run: counting them is the
// point (the target is none).
//
//	replicaload --url http://127.0.0.1:8080/mcp --token T --connections 1000 --duration 60s
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sync"
	"time"
)

type config struct {
	url, token, tool, args string
	connections            int
	duration, timeout      time.Duration
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("replicaload: ")
	var cfg config
	flag.StringVar(&cfg.url, "url", "", "the streamable-HTTP endpoint, e.g. http://127.0.0.1:8080/mcp")
	flag.StringVar(&cfg.token, "token", os.Getenv("REPLICALOAD_TOKEN"), "bearer token")
	flag.StringVar(&cfg.tool, "tool", "read_file", "tool to call")
	flag.StringVar(&cfg.args, "args", `{"path":"hello.txt"}`, "tool arguments (a JSON object)")
	flag.IntVar(&cfg.connections, "connections", 1000, "client connections, each with one call in flight")
	flag.DurationVar(&cfg.duration, "duration", 60*time.Second, "how long to run")
	flag.DurationVar(&cfg.timeout, "timeout", 30*time.Second, "per call")
	flag.Parse()
	if cfg.url == "" || cfg.connections < 1 || !json.Valid([]byte(cfg.args)) {
		log.Fatal("need --url, --connections ≥ 1 and --args a JSON object")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	r := run(ctx, cfg)
	r.print(os.Stdout, cfg)
}

// result is what the run measured.
type result struct {
	mu      sync.Mutex
	lat     []time.Duration
	errs    map[string]int
	elapsed time.Duration
}

func (r *result) add(d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs[err.Error()]++
		return
	}
	r.lat = append(r.lat, d)
}

// run starts every connection's worker and stops them after the duration.
func run(ctx context.Context, cfg config) *result {
	ctx, cancel := context.WithTimeout(ctx, cfg.duration)
	defer cancel()
	r := &result{errs: map[string]int{}}
	body := request(cfg)
	var wg sync.WaitGroup
	start := time.Now()
	for range cfg.connections {
		// One transport per worker: one TCP connection each, kept alive.
		c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1}, Timeout: cfg.timeout}
		wg.Go(func() {
			defer c.CloseIdleConnections()
			for ctx.Err() == nil {
				t0 := time.Now()
				err := call(ctx, c, cfg, body)
				if ctx.Err() != nil && err != nil {
					return // cut by the end of the run, not a failure
				}
				r.add(time.Since(t0), err)
			}
		})
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	return r
}

func request(cfg config) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": cfg.tool, "arguments": json.RawMessage(cfg.args), "_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}}})
	return b
}

// call makes one call; an HTTP error, a JSON-RPC error and an isError
// result are errors, named by kind so that they can be counted.
func call(ctx context.Context, c *http.Client, cfg config, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": cfg.tool, "Authorization": "Bearer " + cfg.token} {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("transport: %T", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return fmt.Errorf("reading the answer: %T", err)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return check(raw)
}

// check reads an answer: a JSON body or an event stream whose data holds it.
func check(raw []byte) error {
	if i := bytes.Index(raw, []byte("data:")); i >= 0 {
		raw = raw[i+5:]
	}
	var r struct {
		Error  *struct{ Code int } `json:"error"`
		Result *struct {
			IsError bool `json:"isError"`
			Meta    struct {
				Error struct {
					Code string `json:"code"`
				} `json:"io.toolwarden/error"`
			} `json:"_meta"`
		} `json:"result"`
	}
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&r); err != nil {
		return fmt.Errorf("not JSON-RPC")
	}
	switch {
	case r.Error != nil:
		return fmt.Errorf("JSON-RPC error %d", r.Error.Code)
	case r.Result == nil:
		return fmt.Errorf("no result")
	case r.Result.IsError:
		return fmt.Errorf("tool error %s", r.Result.Meta.Error.Code)
	}
	return nil
}

func (r *result) print(w io.Writer, cfg config) {
	slices.Sort(r.lat)
	pct := func(p float64) time.Duration {
		if len(r.lat) == 0 {
			return 0
		}
		return r.lat[min(len(r.lat)-1, int(float64(len(r.lat))*p))]
	}
	errors := 0
	for _, n := range r.errs {
		errors += n
	}
	out := map[string]any{"connections": cfg.connections, "seconds": r.elapsed.Seconds(), "calls": len(r.lat),
		"calls_per_s": float64(len(r.lat)) / r.elapsed.Seconds(), "p50_ms": ms(pct(0.50)), "p99_ms": ms(pct(0.99)),
		"errors": errors, "errors_by_kind": r.errs}
	b, _ := json.Marshal(out)
	fmt.Fprintf(w, "%d connections, %.1fs: %d calls (%.0f/s), p50 %.2f ms, p99 %.2f ms, %d errors %v\n%s\n",
		cfg.connections, r.elapsed.Seconds(), len(r.lat), out["calls_per_s"], ms(pct(0.5)), ms(pct(0.99)), errors, r.errs, b)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
