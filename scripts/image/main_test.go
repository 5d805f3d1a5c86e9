package main

import (
	"archive/tar"
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"golang.org/x/sys/unix"
)

// staticBinary builds toolwarden as the release does for the image.
func staticBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "toolwarden")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "../../cmd/toolwarden")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

// TestImage builds the image tarball, inspects it with go-containerregistry
// (config, layers, files, owners), then extracts its filesystem and runs
// the binary inside as the entrypoint would: over stdio it lists only the
// read-only tools. No container runtime is needed.
func TestImage(t *testing.T) {
	bin := staticBinary(t)
	dir := t.TempDir()
	o := options{binary: bin, platform: "linux/amd64", version: "9.9.9", commit: "abc", tag: "toolwarden:test",
		out: filepath.Join(dir, "image.tar"), created: time.Unix(0, 0).UTC()}
	require.NoError(t, write(o))

	img, err := tarball.ImageFromPath(o.out, nil)
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	require.Equal(t, []string{binaryPath}, cf.Config.Entrypoint)
	require.Equal(t, []string{"serve"}, cf.Config.Cmd)
	require.Equal(t, "65532:65532", cf.Config.User, "runs as distroless's nonroot, not root")
	require.Equal(t, "linux", cf.OS)
	require.Equal(t, "amd64", cf.Architecture)
	require.Contains(t, cf.Config.Env, "XDG_CONFIG_HOME=/etc")
	require.Equal(t, "9.9.9", cf.Config.Labels["org.opencontainers.image.version"])
	layers, err := img.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 2, "the base layer and the application layer")

	root, owners := extract(t, img)
	passwd, err := os.ReadFile(filepath.Join(root, "etc/passwd"))
	require.NoError(t, err)
	require.Contains(t, string(passwd), "nonroot:x:65532:65532:")
	require.Equal(t, 65532, owners["var/lib/toolwarden"], "the audit directory belongs to the image's user")
	require.Equal(t, 0, owners["usr/bin/toolwarden"], "the user cannot replace the binary")
	fi, err := os.Stat(filepath.Join(root, binaryPath))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o755), fi.Mode().Perm())

	names := listTools(t, root)
	require.Equal(t, []string{"directory_tree", "file_info", "grep_files", "list_directory", "read_file", "read_multiple_files", "search_files"}, names)

	t.Run("under runsc", func(t *testing.T) { runUnderRunsc(t, root) })

	// The same inputs give the same image.
	again := o
	again.out = filepath.Join(dir, "again.tar")
	require.NoError(t, write(again))
	img2, err := tarball.ImageFromPath(again.out, nil)
	require.NoError(t, err)
	d1, err := img.Digest()
	require.NoError(t, err)
	d2, err := img2.Digest()
	require.NoError(t, err)
	require.Equal(t, d1, d2, "the image is reproducible")
}

// extract writes the image's flattened filesystem under a new directory
// and returns it with each entry's owner (files are written as the test's
// user; the owners are what a runtime would set).
func extract(t *testing.T, img v1.Image) (string, map[string]int) {
	t.Helper()
	root := t.TempDir()
	owners := map[string]int{}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return root, owners
		}
		require.NoError(t, err)
		owners[strings.TrimSuffix(path.Clean(h.Name), "/")] = h.Uid
		p := filepath.Join(root, h.Name)
		require.True(t, strings.HasPrefix(p, root+string(filepath.Separator)), h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			require.NoError(t, os.MkdirAll(p, 0o755))
		case tar.TypeReg:
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode).Perm())
			require.NoError(t, err)
			_, err = io.Copy(f, tr)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		default:
			t.Fatalf("unexpected entry type %c for %s", h.Typeflag, h.Name)
		}
	}
}

// listTools runs the extracted binary as the image's entrypoint and
// command, with the image's configuration (XDG_CONFIG_HOME pointing into
// the extracted /etc), and returns the tools it lists over stdio. The
// workspace and audit paths, /workspace and /var/lib/toolwarden in a
// container, are moved to temporary directories by environment variables.
func listTools(t *testing.T, root string) []string {
	t.Helper()
	ws, state := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hello from the image\n"), 0o644))
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + state, "XDG_CONFIG_HOME=" + filepath.Join(root, "etc"),
		"TOOLWARDEN_WORKSPACE=" + ws, "TOOLWARDEN_AUDIT_PATH=" + filepath.Join(state, "audit.jsonl")}
	c, err := client.NewStdioMCPClient(filepath.Join(root, binaryPath), env, "serve")
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "image-test", Version: "1"}
	_, err = c.Initialize(ctx, init)
	require.NoError(t, err)
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	require.NoError(t, err)
	var names []string
	for _, tool := range list.Tools {
		require.NotNil(t, tool.Annotations.ReadOnlyHint, tool.Name)
		require.True(t, *tool.Annotations.ReadOnlyHint, "%s is not read-only", tool.Name)
		names = append(names, tool.Name)
	}
	sort.Strings(names)

	req := mcp.CallToolRequest{}
	req.Params.Name = "read_file"
	req.Params.Arguments = map[string]any{"path": "hello.txt"}
	res, err := c.CallTool(ctx, req)
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.Contains(t, res.Content[0].(mcp.TextContent).Text, "hello from the image")
	return names
}

// runUnderRunsc runs the image's filesystem with gVisor's runsc as the OCI
// runtime, as docs/container.md shows: read-only root, the image's user,
// entrypoint and environment, no network, the workspace bound read-only.
// Over stdin/stdout the server lists the read-only tools.
func runUnderRunsc(t *testing.T, rootfs string) {
	testenv.Root(t)
	runsc := findRunsc(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hello under gVisor\n"), 0o644))
	spec := map[string]any{
		"ociVersion": "1.0.0",
		"process": map[string]any{
			"user": map[string]any{"uid": nonroot, "gid": nonroot},
			"args": []string{binaryPath, "serve"}, "cwd": "/",
			"env": []string{"PATH=/usr/bin:/bin", "HOME=/home/nonroot", "XDG_CONFIG_HOME=/etc"},
		},
		"root":     map[string]any{"path": rootfs, "readonly": true},
		"hostname": "toolwarden",
		"mounts": []map[string]any{
			{"destination": "/proc", "type": "proc", "source": "proc"},
			{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": []string{"nosuid", "nodev", "mode=1777"}},
			{"destination": workspace, "type": "bind", "source": ws, "options": []string{"rbind", "ro"}},
			{"destination": auditDir, "type": "tmpfs", "source": "tmpfs", "options": []string{"nosuid", "nodev", "mode=0700", "uid=65532", "gid=65532"}},
		},
		"linux": map[string]any{"namespaces": []map[string]string{{"type": "pid"}, {"type": "network"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}}},
	}
	b, err := json.Marshal(spec)
	require.NoError(t, err)
	bundle := filepath.Join(dir, "bundle")
	require.NoError(t, os.Mkdir(bundle, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bundle, "config.json"), b, 0o644))

	state := filepath.Join(dir, "state")
	t.Cleanup(func() {
		// runsc --network=none bind-mounts its empty namespace here.
		_ = unix.Unmount(filepath.Join(state, "null-netns"), unix.MNT_DETACH)
	})
	requests := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"runsc-test","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"hello.txt"}}}`,
	}, "\n") + "\n"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, runsc, "--root", state, "--network=none", "run", "--bundle", bundle, "toolwarden-image-test")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	_, err = io.WriteString(stdin, requests)
	require.NoError(t, err)
	answers := readAnswers(t, stdout, 3)
	require.NoError(t, stdin.Close()) // end of input: the server exits
	require.NoError(t, cmd.Wait(), stderr.String())

	require.Contains(t, answers[1], `"serverInfo":{"name":"toolwarden"`)
	for _, tool := range []string{"read_file", "list_directory", "grep_files"} {
		require.Contains(t, answers[2], `"name":"`+tool+`"`)
	}
	require.NotContains(t, answers[2], `"name":"write_file"`, "read-only tools by default")
	require.Contains(t, answers[3], "hello under gVisor")
}

// readAnswers reads the server's lines until it has answered ids 1..n
// and returns the answers by id (the context kills a server that hangs).
func readAnswers(t *testing.T, r io.Reader, n int) map[int]string {
	t.Helper()
	got := map[int]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for len(got) < n && sc.Scan() {
		var msg struct {
			ID *int `json:"id"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) == nil && msg.ID != nil {
			got[*msg.ID] = sc.Text()
		}
	}
	require.Len(t, got, n, "answers before the output ended: %v", got)
	return got
}

// findRunsc prefers the current runsc scripts/sandbox-setup installs into
// the toolwarden cache, then PATH.
func findRunsc(t *testing.T) string {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	if p := filepath.Join(cache, "toolwarden", "bin", "runsc"); isExec(p) {
		return p
	}
	if p, err := exec.LookPath("runsc"); err == nil {
		return p
	}
	testenv.Missing(t, "runsc not found (scripts/sandbox-setup installs it)")
	return ""
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
