//go:build unix

package configs

import "syscall"

// openPrivateFlags open a secret file without waiting: O_NONBLOCK makes
// opening a FIFO return at once (for fstat to refuse it) rather than wait
// for a writer, and O_NOCTTY keeps a terminal from becoming ours. Reads
// of the regular file that passes are unchanged.
const openPrivateFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY
