package outfilter

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/internal/fakesecret"
)

// mixedText is about 1 MiB of what tools return: prose, Go and YAML that
// talk about keys, tokens, auth and passwords, log lines, hashes and IDs,
// with every fake secret of fakesecret.All placed in it once.
func mixedText() string {
	chunks := []string{
		"The API key is read from the environment; never put an access token in the config file.\n",
		"func (c *Client) authenticate(ctx context.Context, token string) error { return c.auth.Verify(ctx, token) }\n",
		"2026-11-21T17:31:38Z INFO request id=550e8400-e29b-41d4-a716-446655440000 user=alice status=200 took=12ms\n",
		"commit 3f2a9c1d4e5b6a7f8091a2b3c4d5e6f708192a3b Author: Bob <bob@example.com> fix password reset flow\n",
		"database:\n  host: db.internal\n  password_env: DB_PASSWORD\n  credentials: see the secret store\n",
		"They said the key to the monkey's money was in the keyboard, hey, obey the survey key.\n",
		"| Name | Description |\n|------|-------------|\n| auth | Authentication settings for the access layer |\n",
	}
	var b strings.Builder
	secrets := fakesecret.All(42)
	for i := 0; b.Len() < 1<<20; i++ {
		b.WriteString(chunks[i%len(chunks)])
		if i%1000 == 500 && i/1000 < len(secrets) {
			b.WriteString(secrets[i/1000].Line + "\n")
		}
	}
	return b.String()
}

// BenchmarkText1MiB filters 1 MiB of plain text (target: under 20 ms/op).
func BenchmarkText1MiB(b *testing.B) { benchText1MiB(b, newFilter(b)) }

// benchText1MiB filters mixedText with f.
func benchText1MiB(b *testing.B, f *Filter) {
	text := mixedText()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	cpu := startCPU()
	for b.Loop() {
		var rep Report
		f.Text(text, &rep)
	}
	cpu.report(b)
}

// BenchmarkTextResult1MiB filters a tool result holding the 1 MiB as one
// text content, the "1 MiB text result" (target: under 20 ms/op).
func BenchmarkTextResult1MiB(b *testing.B) {
	f := newFilter(b)
	res := mcp.NewToolResultText(mixedText())
	b.SetBytes(int64(len(res.Content[0].(mcp.TextContent).Text)))
	b.ReportAllocs()
	cpu := startCPU()
	for b.Loop() {
		if _, _, err := f.Result(res); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b)
}

// BenchmarkResult1MiB filters a read_file-shaped result: the 1 MiB text as a
// structured-content string plus its JSON text copy.
func BenchmarkResult1MiB(b *testing.B) {
	f := newFilter(b)
	raw, _ := json.Marshal(map[string]any{"path": "big.txt", "content": mixedText(), "size": 1 << 20})
	benchJSONResult(b, f, raw)
}

// cpuClock reports the process's CPU time per op (user + system, GC
// included) beside ns/op, which is wall time and grows with whatever else
// the machine runs.
type cpuClock time.Duration

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU() cpuClock { return cpuClock(processCPU()) }

func (c cpuClock) report(b *testing.B) {
	b.ReportMetric(float64(processCPU()-time.Duration(c))/float64(b.N), "cpu-ns/op")
}

// BenchmarkBase64Result1MiB filters a retrieve_artifact-shaped result: the
// 1 MiB text in base64 (1.4 MB) as a structured-content string plus its
// JSON text copy. The text is decoded, filtered and, as it holds secrets,
// encoded again.
func BenchmarkBase64Result1MiB(b *testing.B) {
	f := newFilter(b)
	raw, _ := json.Marshal(map[string]any{"name": "big.txt", "encoding": "base64", "content": base64.StdEncoding.EncodeToString([]byte(mixedText())), "size": 1 << 20})
	benchJSONResult(b, f, raw)
}

// BenchmarkResult4KiB filters a read_file-shaped result of a 4 KiB file
// (the per-call case of the stdio benchmark): structured content plus its
// JSON text copy.
func BenchmarkResult4KiB(b *testing.B) {
	f := newFilter(b)
	raw, _ := json.Marshal(map[string]any{"path": "bench.txt", "content": strings.Repeat("0123456789abcdef\n", 241), "size": 4097, "lines": 241})
	benchJSONResult(b, f, raw)
}

// BenchmarkResult4KiBBase64 is BenchmarkResult4KiB with the file
// scripts/bench/compare.sh reads: 4 KiB of base64 of random bytes, one
// line, which the filter must find to be binary (see inBase64).
func BenchmarkResult4KiBBase64(b *testing.B) {
	f := newFilter(b)
	raw, _ := json.Marshal(map[string]any{"path": "bench.txt", "content": base64.StdEncoding.EncodeToString(randomBytes(7, 3072)), "size": 4096, "lines": 1})
	benchJSONResult(b, f, raw)
}

// BenchmarkResult4KiBBase64Files is BenchmarkResult4KiBBase64 over 256
// different random files in turn, as compare.sh reads with each SEED:
// about one in ten holds a service's name ("xray", "sumo", "okta") by
// chance, whose rule then runs, so one file's figure is not the average.
func BenchmarkResult4KiBBase64Files(b *testing.B) {
	f := newFilter(b)
	var results []*mcp.CallToolResult
	for seed := range uint64(256) {
		raw, _ := json.Marshal(map[string]any{"path": "bench.txt", "content": base64.StdEncoding.EncodeToString(randomBytes(seed+100, 3072)), "size": 4096, "lines": 1})
		results = append(results, &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(raw))}, StructuredContent: json.RawMessage(raw)})
	}
	b.ReportAllocs()
	cpu := startCPU()
	i := 0
	for b.Loop() {
		if _, _, err := f.Result(results[i%len(results)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	cpu.report(b)
}

// BenchmarkResult4KiBSource is BenchmarkResult4KiB with Go source (the
// first 4 KiB of this package's text.go), dense in keywords such as
// "key", "token" and Vault's "s.".
func BenchmarkResult4KiBSource(b *testing.B) {
	f := newFilter(b)
	src, err := os.ReadFile("text.go")
	if err != nil {
		b.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"path": "text.go", "content": string(src[:min(len(src), 4096)]), "size": 4096})
	benchJSONResult(b, f, raw)
}

// benchJSONResult filters, per op, a result holding raw as its structured
// content and as the JSON text copy beside it, as tools return them.
func benchJSONResult(b *testing.B, f *Filter, raw []byte) {
	res := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(raw))}, StructuredContent: json.RawMessage(raw)}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	cpu := startCPU()
	for b.Loop() {
		if _, _, err := f.Result(res); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b)
}

// BenchmarkText1MiBCatalog is BenchmarkText1MiB with the filter given the
// built-in tools' names, as the server gives it: the tool names and the
// call verbs (nearCall) are in its automaton then.
func BenchmarkText1MiBCatalog(b *testing.B) { benchText1MiB(b, catalogFilter(b)) }

// BenchmarkResult4KiBSourceCatalog is BenchmarkResult4KiBSource with the
// built-in tools' names: source text says "use" and "run" often.
func BenchmarkResult4KiBSourceCatalog(b *testing.B) {
	src, err := os.ReadFile("text.go")
	if err != nil {
		b.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"path": "text.go", "content": string(src[:4096])})
	benchJSONResult(b, catalogFilter(b), raw)
}

// BenchmarkTextNearCalls is the worst case of nearCall: 1 MiB of a verb
// before an identifier as long as the catalog's names, none of them.
func BenchmarkTextNearCalls(b *testing.B) {
	f := catalogFilter(b)
	text := strings.Repeat("call update_tasks_x; ", (1<<20)/21)
	b.SetBytes(int64(len(text)))
	cpu := startCPU()
	for b.Loop() {
		var rep Report
		f.Text(text, &rep)
	}
	cpu.report(b)
}
