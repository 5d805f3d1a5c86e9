// Package hostcheck refuses HTTP requests whose Host header names no host
// the listener answers to. A page on a DNS-rebound name (attacker.example,
// resolving to 127.0.0.1 after the page loaded) reaches a loopback
// listener from the browser as a same-origin request; the one thing that
// still tells it apart is the Host, which is the attacker's name. The MCP
// listener and the metrics listener share the check through this package.
package hostcheck

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/toolwarden/toolwarden/configs"
)

// Hostname is the host of a Host header value, without its port (and
// without brackets around an IPv6 address).
func Hostname(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// Loopback reports whether a Host header value names localhost or a
// loopback IP.
func Loopback(hostport string) bool { return configs.IsLoopback(Hostname(hostport)) }

// IPLiteral reports whether a Host header value names an IP address, not
// a name. A DNS-rebinding page can only send its own name as Host.
func IPLiteral(hostport string) bool {
	_, err := netip.ParseAddr(Hostname(hostport))
	return err == nil
}

// Handler serves next only the requests whose Host ok accepts; the others
// get 403 and a message naming the Host and why (a config key or rule).
func Handler(ok func(hostport string) bool, why string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !ok(r.Host) {
			http.Error(w, "forbidden: Host "+quote(r.Host)+" is not allowed ("+why+")", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// quote shows a client's Host in a refusal: at most 200 bytes, in quotes
// it cannot close.
func quote(s string) string {
	if len(s) > 200 {
		s = s[:200]
	}
	return `"` + strings.ReplaceAll(s, `"`, `'`) + `"`
}
