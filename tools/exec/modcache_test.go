package exec_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	texec "github.com/toolwarden/toolwarden/tools/exec"
)

// A module with one dependency, and the go.sum that verifies it.
const (
	uuidMod = "module example.com/withdep\n\ngo 1.22\n\nrequire github.com/google/uuid v1.6.0\n"
	uuidSum = "github.com/google/uuid v1.6.0 h1:NIvaJDMOsjHA8n1jAhLSgzrAzy1Hgr+hNrb57e+94F0=\n" +
		"github.com/google/uuid v1.6.0/go.mod h1:TIyPZe4MgqvfeYDBFedMoGGpEw/LqOeaOT+nhxU+yHo=\n"
)

func newModCache(t *testing.T) *texec.ModCache {
	t.Helper()
	root, err := exec.Command("go", "env", "GOROOT").Output()
	require.NoError(t, err)
	// The machine's proxy list, "direct" included: ModCache drops it.
	return texec.NewModCache(filepath.Join(t.TempDir(), "gomod"), strings.TrimSpace(string(root)), "https://proxy.golang.org,direct")
}

// TestModCachePreparesAVerifiedCache: the dependency lands in a module
// cache of its own, verified against go.sum, and the same go.mod and
// go.sum get the same cache again without preparing it twice.
func TestModCachePreparesAVerifiedCache(t *testing.T) {
	m := newModCache(t)
	dir, err := m.Prepare(context.Background(), []byte(uuidMod), []byte(uuidSum))
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(dir, "cache", "download", "github.com", "google", "uuid", "@v", "v1.6.0.zip"))
	assert.FileExists(t, filepath.Join(dir, "github.com", "google", "uuid@v1.6.0", "uuid.go"))
	assert.NoDirExists(t, filepath.Join(filepath.Dir(dir), "src"), "the copied go.mod is not kept")
	again, err := m.Prepare(context.Background(), []byte(uuidMod), []byte(uuidSum))
	require.NoError(t, err)
	assert.Equal(t, dir, again)
}

// TestModCacheRefusesWhatGoSumDoesNotVouchFor: a missing or wrong
// checksum, or a directory replace (the host would read outside the
// workspace), is refused naming the rule; nothing is kept.
func TestModCacheRefusesWhatGoSumDoesNotVouchFor(t *testing.T) {
	for _, tc := range []struct {
		name, mod, sum, rule string
	}{
		{"no go.sum", uuidMod, "", "exec.go_modules.go_sum"},
		{"go.mod sum only", uuidMod, strings.SplitAfter(uuidSum, "\n")[1], "exec.go_modules.go_sum"},
		{"tampered sum", uuidMod, strings.Replace(uuidSum, "NIvaJ", "NIvaK", 1), "exec.go_modules.download"},
		{"directory replace", uuidMod + "replace github.com/google/uuid => ../../etc\n", uuidSum, "exec.go_modules.replace"},
		{"toolchain switch", strings.Replace(uuidMod, "go 1.22", "go 1.99", 1), uuidSum, "exec.go_modules.download"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newModCache(t)
			_, err := m.Prepare(context.Background(), []byte(tc.mod), []byte(tc.sum))
			require.Error(t, err)
			e := toolerr.As(err)
			assert.Equal(t, tc.rule, e.Rule, "%v", e)
		})
	}
}

func TestModCacheNeedsAProxy(t *testing.T) {
	m := texec.NewModCache(t.TempDir(), "/usr/local/go", "direct")
	_, err := m.Prepare(context.Background(), []byte(uuidMod), []byte(uuidSum))
	assert.Equal(t, toolerr.BackendUnavailable, toolerr.CodeOf(err))
	_, statErr := os.Stat(filepath.Join(t.TempDir(), "gomod"))
	assert.True(t, os.IsNotExist(statErr))
}
