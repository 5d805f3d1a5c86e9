//go:build !linux

package mcpserver

// releaseBinaryPages releases nothing where there is no /proc/self/smaps
// to tell the executable's clean pages (see app_idle_linux.go).
func releaseBinaryPages() (int, error) { return 0, nil }
