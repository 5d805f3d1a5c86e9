package capability

import (
	"net/netip"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// coversHostPort matches host:port against a host-glob:port pattern. Dots
// become separators, so "*.example.com" matches one label, not
// "evil.com/.example.com" or "a.b.example.com". An IPv6 need ("[::1]:80")
// is matched only by the same address or by "**".
func coversHostPort(pattern, need string) bool {
	ph, pp, ok1 := cutLast(pattern)
	nh, np, ok2 := cutLast(need)
	if !ok1 || !ok2 || !validNetNeed(need) || pp != "*" && pp != np {
		return false
	}
	if strings.HasPrefix(nh, "[") {
		return ph == "**" || strings.EqualFold(ph, nh)
	}
	return doublestar.MatchUnvalidated(strings.ReplaceAll(strings.ToLower(ph), ".", "/"), strings.ReplaceAll(strings.ToLower(nh), ".", "/"))
}

// validNetNeed reports whether need is host:port with a DNS name, an IPv4
// address or a bracketed IPv6 address, and a non-empty port.
func validNetNeed(need string) bool {
	h, port, ok := cutLast(need)
	if !ok || port == "" || strings.ContainsAny(port, "*?[{\\") {
		return false
	}
	if ip, found := strings.CutPrefix(h, "["); found {
		addr, err := netip.ParseAddr(strings.TrimSuffix(ip, "]"))
		return err == nil && addr.Is6() && strings.HasSuffix(ip, "]")
	}
	return validHost(h)
}

// validHost accepts DNS names and IPv4 addresses: non-empty labels of
// letters, digits, '-' and '_' (no empty label, so "*" never matches "").
func validHost(h string) bool {
	for _, label := range strings.Split(h, ".") {
		if label == "" {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

func cutLast(s string) (string, string, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}
