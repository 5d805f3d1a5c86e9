package egress

import "net/netip"

// reach says how far an address may be reached by name.
type reach int

const (
	public reach = iota
	// internal addresses (loopback, private, CGNAT, ULA) are reached by a
	// name only when that exact name is listed.
	internal
	// never addresses (link-local and the metadata services, unspecified,
	// multicast, reserved, and the prefixes that embed an IPv4 address)
	// are reached by no name: only as an exactly listed IP.
	never
)

var (
	metadataAddrs = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, ...
		netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
	}
	internalPrefixes = []netip.Prefix{
		netip.MustParsePrefix("100.64.0.0/10"), // CGNAT
	}
	neverPrefixes = []netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"),
		netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
		netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
		netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
		netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated): embeds any IPv4
		netip.MustParsePrefix("::ffff:0:0:0/96"), // SIIT IPv4-translated: embeds any IPv4
		netip.MustParsePrefix("64:ff9b::/96"),    // NAT64: embeds any IPv4
		netip.MustParsePrefix("64:ff9b:1::/48"),
		netip.MustParsePrefix("2002::/16"), // 6to4: embeds any IPv4
		netip.MustParsePrefix("2001::/32"), // Teredo
		netip.MustParsePrefix("100::/64"),  // discard
	}
)

// classify says how a resolved address may be reached, with a word for
// errors.
func classify(a netip.Addr) (reach, string) {
	a = a.Unmap()
	for _, m := range metadataAddrs {
		if a == m {
			return never, "a cloud metadata address"
		}
	}
	switch {
	case a.IsLinkLocalUnicast():
		return never, "a link-local address"
	case a.IsUnspecified():
		return never, "an unspecified address"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast(), a.IsLinkLocalMulticast():
		return never, "a multicast address"
	case a.IsLoopback():
		return internal, "a loopback address"
	case a.IsPrivate():
		return internal, "a private address"
	}
	for _, p := range neverPrefixes {
		if p.Contains(a) {
			return never, "a reserved address"
		}
	}
	for _, p := range internalPrefixes {
		if p.Contains(a) {
			return internal, "a shared (CGNAT) address"
		}
	}
	return public, ""
}
