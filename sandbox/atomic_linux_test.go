//go:build linux

package sandbox_test

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// TestWriteFileAtomicFailsMidWrite makes the data write itself fail, after
// the temporary file exists, by lowering RLIMIT_FSIZE (the Go runtime
// ignores SIGXFSZ, so write returns EFBIG). The old content must survive and
// the temporary file must be gone. It works for root too, unlike a
// read-only directory.
func TestWriteFileAtomicFailsMidWrite(t *testing.T) {
	l := newLayout(t)
	var old syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old))
	lowered := old
	lowered.Cur = 4
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lowered))
	err := l.ws.WriteFileAtomic(context.Background(), insideTarget, []byte("this is far longer than four bytes"))
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old))

	requireCode(t, err, toolerr.Internal)
	requireContent(t, filepath.Join(l.dir, insideTarget), insideText)
	requireNoTemp(t, l.parent)
	l.requireOutsideIntact(t)
}
