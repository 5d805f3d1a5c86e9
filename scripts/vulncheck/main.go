// Command vulncheck reads govulncheck's JSON output and fails when the
// code calls a vulnerable symbol, unless that vulnerability is listed in
// the accepted file with the reason it cannot be fixed here. govulncheck
// has no way to accept a finding; this is it, and it is loud: every
// accepted finding is printed on every run, and an accepted entry that no
// longer matches a finding is reported so the list shrinks.
//
//	govulncheck -format json ./... | go run ./scripts/vulncheck -accepted scripts/vulncheck/accepted.txt
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

func main() {
	accepted := flag.String("accepted", "", "file of accepted vulnerabilities: ID, whitespace, reason; # starts a comment")
	flag.Parse()
	acc := map[string]string{}
	if *accepted != "" {
		f, err := os.Open(*accepted)
		if err != nil {
			fmt.Fprintln(os.Stderr, "vulncheck:", err)
			os.Exit(2)
		}
		acc, err = parseAccepted(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "vulncheck: %s: %v\n", *accepted, err)
			os.Exit(2)
		}
	}
	called, err := calledVulns(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulncheck: reading govulncheck's output:", err)
		os.Exit(2)
	}
	if !report(os.Stdout, called, acc) {
		os.Exit(1)
	}
}

// finding is the part of govulncheck's finding message this reads.
type finding struct {
	OSV          string `json:"osv"`
	FixedVersion string `json:"fixed_version"`
	Trace        []struct {
		Module   string `json:"module"`
		Version  string `json:"version"`
		Package  string `json:"package"`
		Function string `json:"function"`
		Receiver string `json:"receiver"`
	} `json:"trace"`
}

// called is one vulnerability the code reaches: where it is and the first
// vulnerable symbol found.
type called struct{ module, version, fixed, symbol string }

// calledVulns returns, by OSV ID, the findings whose trace reaches a
// function: govulncheck's "your code is affected". Findings at module or
// package level (imported, not called) are not counted.
func calledVulns(r io.Reader) (map[string]called, error) {
	out := map[string]called{}
	dec := json.NewDecoder(r)
	for {
		var msg struct {
			Finding *finding `json:"finding"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		f := msg.Finding
		if f == nil || len(f.Trace) == 0 || f.Trace[0].Function == "" {
			continue
		}
		if _, seen := out[f.OSV]; seen {
			continue
		}
		t := f.Trace[0]
		sym := t.Package + "." + t.Function
		if t.Receiver != "" {
			sym = t.Package + "." + strings.TrimPrefix(t.Receiver, "*") + "." + t.Function
		}
		out[f.OSV] = called{module: t.Module, version: t.Version, fixed: f.FixedVersion, symbol: sym}
	}
}

// parseAccepted reads "ID reason..." lines; every entry needs a reason.
func parseAccepted(r io.Reader) (map[string]string, error) {
	acc := map[string]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		id, reason, _ := strings.Cut(strings.TrimSpace(line), " ")
		if id == "" {
			continue
		}
		if strings.TrimSpace(reason) == "" {
			return nil, fmt.Errorf("line %d: %s has no reason; say why it cannot be fixed", n, id)
		}
		acc[id] = strings.TrimSpace(reason)
	}
	return acc, sc.Err()
}

// report prints every called vulnerability and whether it is accepted,
// and returns false when any is not.
func report(w io.Writer, vulns map[string]called, acc map[string]string) bool {
	ids := make([]string, 0, len(vulns))
	for id := range vulns {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	ok := true
	for _, id := range ids {
		v := vulns[id]
		fixed := v.fixed
		if fixed == "" {
			fixed = "no fixed version"
		}
		where := fmt.Sprintf("%s %s@%s (fixed in %s), calls %s", id, v.module, v.version, fixed, v.symbol)
		if reason, yes := acc[id]; yes {
			fmt.Fprintf(w, "ACCEPTED %s: %s\n", where, reason)
			continue
		}
		ok = false
		fmt.Fprintf(w, "VULNERABLE %s: upgrade, or add it to the accepted list with the reason\n", where)
	}
	for id := range acc {
		if _, found := vulns[id]; !found {
			fmt.Fprintf(w, "STALE accepted %s is no longer called: remove it from the list\n", id)
		}
	}
	fmt.Fprintf(w, "vulncheck: %d called vulnerabilities, %d accepted, %d not\n", len(vulns), len(vulns)-countMissing(ids, acc), countMissing(ids, acc))
	return ok
}

func countMissing(ids []string, acc map[string]string) int {
	n := 0
	for _, id := range ids {
		if _, yes := acc[id]; !yes {
			n++
		}
	}
	return n
}
