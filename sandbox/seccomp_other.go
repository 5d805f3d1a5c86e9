//go:build !linux

package sandbox

import "errors"

// seccompProgram has no meaning off Linux, where no sandbox backend runs
// (see platform_other.go): bubblewrap refuses to start without its filter.
func seccompProgram() ([]byte, error) {
	return nil, errors.New("seccomp filters exist only on Linux")
}
