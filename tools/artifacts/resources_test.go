package artifacts

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/artifactkey"
)

// TestListResources pages through every task's artifacts in key order,
// hiding objects store_artifact would not have made. It runs on the fake
// alone: a shared bucket holds other tests' artifacts, so only a private
// one has a listing to compare with.
func TestListResources(t *testing.T) {
	s := fakeStore(t)
	var want []string
	for _, task := range []string{newTask(), newTask()} {
		for i := range resourcePage - 20 {
			name := fmt.Sprintf("f%03d.txt", i)
			_, err := s.store(ctxT(t), StoreIn{TaskID: task, Name: name, Content: "x", Encoding: "text"})
			require.NoError(t, err)
			want = append(want, artifactkey.URI(task, name))
		}
		_, err := s.objects.Put(ctxT(t), artifactkey.Key(task, "sub/x.txt"), strings.NewReader("x"), 1, minio.PutObjectOptions{})
		require.NoError(t, err)
	}
	_, err := s.objects.Put(ctxT(t), "tasks/not-a-uuid/artifacts/x.txt", strings.NewReader("x"), 1, minio.PutObjectOptions{})
	require.NoError(t, err)
	slices.Sort(want)

	var got []string
	cursor := ""
	for pages := 1; ; pages++ {
		list, next, err := s.listResources(ctxT(t), cursor)
		require.NoError(t, err)
		require.LessOrEqual(t, len(list), resourcePage)
		for _, r := range list {
			got = append(got, r.URI)
		}
		if next == "" {
			require.Equal(t, 2, pages)
			break
		}
		cursor = next
	}
	require.Equal(t, want, got)

	for _, bad := range []string{"%%%", base64.StdEncoding.EncodeToString([]byte("tasks/../x"))} {
		_, _, err := s.listResources(ctxT(t), bad)
		require.Error(t, err, bad)
	}
}
