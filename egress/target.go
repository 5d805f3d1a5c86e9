package egress

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/toolwarden/toolwarden/configs"
)

// target is a host:port a client asked for, parsed strictly.
type target struct {
	host string     // lower-case DNS name, or the address's text
	ip   netip.Addr // valid for an IP literal
	port uint16
}

func (t target) String() string { return net.JoinHostPort(t.host, strconv.Itoa(int(t.port))) }

// parseTarget accepts a plain DNS name or a plain IP address with a port,
// by the same rule as the allow list (configs.ParseNetAllow); every other
// spelling of an address is refused, never normalised.
func parseTarget(hostport string) (target, error) {
	host, port, err := configs.SplitHostPort(hostport)
	if err != nil {
		return target{}, err
	}
	ip, err := configs.ParseHostIP(host)
	if err == nil {
		return target{host: ip.String(), ip: ip, port: port}, nil
	}
	if strings.ContainsAny(host, ":[]") {
		return target{}, err
	}
	if err := configs.CheckHostName(host); err != nil {
		return target{}, err
	}
	return target{host: strings.ToLower(host), port: port}, nil
}

// requestAuthority is the host[:port] of an absolute http:// request target, as
// sent: no userinfo, no percent-encoding, port 80 when absent.
func requestAuthority(requestURI string) (string, error) {
	rest, ok := strings.CutPrefix(requestURI, "http://")
	if !ok {
		return "", errors.New("not an absolute http:// URI (use CONNECT for https)")
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if strings.ContainsAny(rest, "@%") {
		return "", fmt.Errorf("%q carries userinfo or percent-encoding", rest)
	}
	if i := strings.LastIndexByte(rest, ':'); i < 0 || strings.HasSuffix(rest, "]") {
		rest += ":80"
	}
	return rest, nil
}
