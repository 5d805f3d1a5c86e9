// Package audittest reads audit logs in tests: the lines a test's server
// wrote, decoded or raw, and a count of the lines that match. It is the one
// reader the packages' tests share (the pattern of tailscale's *test
// packages); the audit package itself verifies logs, this only reads them.
package audittest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/audit"
)

// Lines returns the log's lines without their ends; a missing or empty
// file has none. Any other read error fails the test.
func Lines(t testing.TB, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	text := strings.TrimSpace(string(data))
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

// Entries returns the log's lines decoded; a line that is not an audit
// entry fails the test.
func Entries(t testing.TB, path string) []audit.Entry {
	t.Helper()
	var out []audit.Entry
	for i, line := range Lines(t, path) {
		out = append(out, Decode(t, line, i+1))
	}
	return out
}

// Decode decodes one line (n is its number, for the failure's message).
func Decode(t testing.TB, line string, n int) audit.Entry {
	t.Helper()
	var e audit.Entry
	if err := json.Unmarshal([]byte(line), &e); err != nil {
		t.Fatalf("audit line %d is not an entry: %v\n%s", n, err, line)
	}
	return e
}

// Count is how many lines name tool (any tool when "") with outcome (any
// outcome when "").
func Count(t testing.TB, path, tool string, outcome audit.Outcome) int {
	t.Helper()
	n := 0
	for _, e := range Entries(t, path) {
		if (tool == "" || e.Tool == tool) && (outcome == "" || e.Outcome == outcome) {
			n++
		}
	}
	return n
}

// Trail lists "outcome:rule:code" for each line, the shape a test of a
// call's path through the guard compares.
func Trail(t testing.TB, path string) []string {
	t.Helper()
	var trail []string
	for _, e := range Entries(t, path) {
		trail = append(trail, string(e.Outcome)+":"+e.Rule+":"+e.Code)
	}
	return trail
}

// Rechain recomputes prev and hash of every line from index from on, as
// the docs define them (SHA-256 over the line's JSON with hash empty), the
// way someone who edits a log without the signing key would hide the edit
// from the hash chain. Signatures are left as they are.
func Rechain(t testing.TB, lines []string, from int) []string {
	t.Helper()
	out := append([]string(nil), lines...)
	prev := strings.Repeat("0", 64)
	if from > 0 {
		prev = Decode(t, out[from-1], from).Hash
	}
	for i := from; i < len(out); i++ {
		e := Decode(t, out[i], i+1)
		e.Prev, e.Hash = prev, ""
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		e.Hash = hex.EncodeToString(sum[:])
		if b, err = json.Marshal(e); err != nil {
			t.Fatal(err)
		}
		out[i], prev = string(b), e.Hash
	}
	return out
}
