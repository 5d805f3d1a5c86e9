package socket

import "golang.org/x/sys/unix"

// socketPeerUID is the peer's uid by SO_PEERCRED.
func socketPeerUID(fd int) (int, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return 0, err
	}
	return int(cred.Uid), nil
}
