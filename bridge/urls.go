package bridge

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// checkCredentialURL refuses an endpoint a credential would reach in clear
// text: https anywhere, plain http only on loopback (local fakes, a local
// `toolwarden serve --http`).
func checkCredentialURL(flag, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%s %q: not an absolute URL", flag, raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("%s %q: plain http to a non-loopback host would send the credential in clear text; use https", flag, raw)
	}
	return fmt.Errorf("%s %q: the scheme must be https (or http on loopback)", flag, raw)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
