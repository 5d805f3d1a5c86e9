// Package egress is the sandboxes' only way out: an HTTP proxy (CONNECT
// for TLS, absolute-URI requests for plain HTTP) that the server serves on
// a listener per call or per sandboxed server, and that connects to the
// host:port pairs a network block allows and nothing else.
//
// It resolves names itself and dials the address it checked (no second
// lookup a rebinding DNS server could answer differently), refuses every
// spelling of an address that is not plain, refuses names resolving to
// private, loopback, link-local or metadata addresses unless the exact
// name or address is listed, checks that a TLS ClientHello names the host
// the CONNECT named, and caps connections, bytes and time per call. For
// hosts with credentials it terminates TLS with a leaf of an ephemeral,
// in-memory CA and puts the real value into the named header in place of
// the placeholder the sandbox holds; everything else is tunnelled
// untouched. Each connection ends in one Event (docs/egress.md).
package egress
