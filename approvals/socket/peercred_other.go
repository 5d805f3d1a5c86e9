//go:build !linux && !darwin

package socket

import "errors"

// socketPeerUID fails where toolwarden has no way to ask the kernel who is
// connecting, so the control socket refuses everyone there.
func socketPeerUID(int) (int, error) {
	return 0, errors.New("the peer's uid cannot be read on this system")
}
