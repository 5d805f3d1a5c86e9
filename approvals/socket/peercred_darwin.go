package socket

import "golang.org/x/sys/unix"

// socketPeerUID is the peer's uid by LOCAL_PEERCRED, macOS's SO_PEERCRED.
func socketPeerUID(fd int) (int, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return 0, err
	}
	return int(cred.Uid), nil
}
