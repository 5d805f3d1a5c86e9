package artifacts

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

func TestPreviewStore(t *testing.T) {
	s := &Store{bucket: "tw", limits: Limits{MaxStoreBytes: 16}}
	id := "0b6d3c7e-8f52-4a1e-9a59-3c1f2a4b5d6e"
	got, err := s.previewStore(context.Background(), StoreIn{TaskID: id, Name: "summary.md", Content: "# Sum\n", Encoding: "text"})
	require.NoError(t, err)
	require.Equal(t, "Store artifact tasks/"+id+"/artifacts/summary.md in bucket tw (6 bytes, text/plain; charset=utf-8; fails if it already exists)\n\nContent:\n# Sum\n", got)

	got, err = s.previewStore(context.Background(), StoreIn{TaskID: id, Name: "a.bin", Content: "AAEC", Encoding: "base64", Overwrite: true})
	require.NoError(t, err)
	require.Equal(t, "Store or REPLACE artifact tasks/"+id+"/artifacts/a.bin in bucket tw (3 bytes, application/octet-stream; replaces an existing artifact of that name)", got)

	for _, in := range []StoreIn{
		{TaskID: id, Name: "../x", Content: "x", Encoding: "text"},
		{TaskID: "not-a-uuid", Name: "x", Content: "x", Encoding: "text"},
		{TaskID: id, Name: "x", Content: "0123456789abcdefXX", Encoding: "text"},
	} {
		_, err := s.previewStore(context.Background(), in)
		require.Error(t, err)
		require.NotEqual(t, toolerr.Internal, toolerr.CodeOf(err))
	}
}
