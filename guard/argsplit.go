package guard

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolwarden/toolwarden/guard/outfilter"
)

// A secret split over two arguments ("key": "AKIA…", "key_rest": "…")
// passes a scan of each on its own and is whole again at the other end.
// So the short, token-like string values of one object (no white space,
// between minFragment and maxFragment bytes, nothing found in them alone)
// are also scanned joined two by two, in either order: a secret found
// only so is reported naming both arguments. A secret split three ways or
// more, or over different objects, is not put together.
const (
	minFragment  = 4
	maxFragment  = 128
	maxFragments = 16 // at most 240 joins per object
)

// split scans the pairs of x's fragments and reports whether it redacted
// any (in *out, the object with its secrets redacted: a copy of x made
// when none was yet, nil while nothing changed).
func (s *argScan) split(f *outfilter.Filter, tool *ToolInfo, name string, x map[string]any, out *map[string]any, depth int) bool {
	if s.rule.Secrets == ArgAllow {
		return false
	}
	var keys []string
	for k, v := range x {
		str, ok := v.(string)
		if ok && fragment(str) && !(depth == 0 && slices.Contains(tool.PathArgs, k)) && unchanged(*out, k, v) {
			keys = append(keys, k)
		}
	}
	if len(keys) < 2 || len(keys) > maxFragments {
		return false
	}
	slices.Sort(keys)
	changed := false
	for _, a := range keys {
		for _, b := range keys {
			if a == b {
				continue
			}
			_, rep, err := f.Argument(x[a].(string) + x[b].(string))
			if err != nil || len(rep.Redactions) == 0 {
				continue
			}
			for _, r := range sortedKeys(rep.Redactions) {
				s.secrets = append(s.secrets, fmt.Sprintf("%s+%s: secret %s split across arguments", joinArg(name, a), joinArg(name, b), r))
			}
			if s.rule.Secrets == ArgRedact {
				if *out == nil {
					*out = maps.Clone(x)
				}
				r := outfilter.Redaction(sortedKeys(rep.Redactions)[0])
				(*out)[a], (*out)[b], changed = r, r, true
			}
		}
	}
	return changed
}

// unchanged reports whether member k of the object's redacted copy out
// (nil: nothing redacted yet) still holds v.
func unchanged(out map[string]any, k string, v any) bool {
	return out == nil || out[k] == v
}

// fragment reports whether v may be part of a split token.
func fragment(v string) bool {
	return len(v) >= minFragment && len(v) <= maxFragment && !strings.ContainsAny(v, " \t\r\n")
}
