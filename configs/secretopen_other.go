//go:build !unix

package configs

// openPrivateFlags: see secretopen.go.
const openPrivateFlags = 0
