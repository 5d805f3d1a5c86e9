package e2e

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// era2025 is the revision Codex still opens with (openai/codex#33952):
// a client that offers only it must get everything the revision has.
const era2025 = "2025-06-18"

// negotiatedIn is the protocol revision of the server's "session
// initialized" log lines in log, one per session, in order.
func negotiatedIn(log string) []string {
	var versions []string
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, `msg="session initialized"`) {
			continue
		}
		for _, f := range strings.Fields(line) {
			// The first: the client's name comes after, and is the
			// client's to choose.
			if v, ok := strings.CutPrefix(f, "protocol_version="); ok {
				versions = append(versions, v)
				break
			}
		}
	}
	return versions
}

// eraServer is one toolwarden binary reached over one transport.
type eraServer struct {
	ws  string
	log *testenv.SyncBuffer
	// open connects a new client offering only era2025.
	open func(t *testing.T, h client.ElicitationHandler) *client.Client
}

// eraArgs are the server's extras: run_script unasked in runsc when the
// machine has one (runsc is its path, or empty), and the artifact store
// when the shared services are configured (artifacts is then true).
func eraArgs(t *testing.T) (args, env []string, runsc string, artifacts bool) {
	ws, env := workspace(t)
	args = []string{"--workspace", ws}
	if os.Getenv("TOOLWARDEN_ARTIFACTS_ENDPOINT") != "" {
		for _, kv := range os.Environ() {
			if strings.HasPrefix(kv, "TOOLWARDEN_ARTIFACTS_") {
				env = append(env, kv)
			}
		}
		args = append(args, "--allow", "*_artifact*", "--approval", "store_artifact=allow")
		artifacts = true
	}
	if dir, err := os.UserCacheDir(); err == nil {
		if p := filepath.Join(dir, "toolwarden", "bin", "runsc"); fileExists(p) {
			runsc = p
			args = append(args, runScriptArgs...)
			env = append(env, "TOOLWARDEN_EXEC_BACKEND=runsc", "TOOLWARDEN_EXEC_RUNSC_PATH="+p)
		}
	}
	return args, env, runsc, artifacts
}

// jsonText is v as JSON text.
func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func stdioEra(t *testing.T, args, env []string) eraServer {
	s := eraServer{ws: args[1], log: &testenv.SyncBuffer{}}
	s.open = func(t *testing.T, h client.ElicitationHandler) *client.Client {
		tr := transport.NewStdio(binary, env, append([]string{"serve"}, args...)...)
		opts := []client.ClientOption{client.WithDiscoverTimeout(30 * time.Second)}
		if h != nil {
			opts = append(opts, client.WithElicitationHandler(h))
		}
		c := client.NewClient(tr, opts...)
		require.NoError(t, c.Start(ctxT(t)))
		go func() { _, _ = io.Copy(s.log, tr.Stderr()) }()
		return connectAs(t, c, era2025)
	}
	return s
}

func httpEra(t *testing.T, args, env []string) eraServer {
	s := eraServer{ws: args[1], log: &testenv.SyncBuffer{}}
	base := eraHTTPServe(t, args, env, s.log)
	s.open = func(t *testing.T, h client.ElicitationHandler) *client.Client {
		tr, err := transport.NewStreamableHTTP(base+"/mcp",
			transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer e2e-token-0123456789"}))
		require.NoError(t, err)
		var opts []client.ClientOption
		if h != nil {
			opts = append(opts, client.WithElicitationHandler(h))
		}
		return connectAs(t, client.NewClient(tr, opts...), era2025)
	}
	return s
}

// eraHTTPServe runs `toolwarden serve --http` with its stderr in log,
// once it serves, and stops it when the test ends.
func eraHTTPServe(t *testing.T, args, env []string, log *testenv.SyncBuffer) string {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(binary, append(append([]string{"serve"}, args...), "--http", port)...)
	cmd.Env = append(env, "TOOLWARDEN_HTTP_TOKEN=e2e-token-0123456789")
	cmd.Stderr = log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	require.Eventually(t, func() bool { return strings.Contains(log.String(), "serving HTTP") },
		2*time.Minute, 50*time.Millisecond, "server did not start: %s", log.String())
	return "http://" + port
}

// TestEra20250618 drives every feature of protocol 2025-06-18 through the
// built binary with a client that offers only that revision, over stdio
// and streamable HTTP: the negotiated revision (as the client and the
// server's log see it), tools/list, structured output, an error result,
// elicitation for approval, progress on a run_script that reports it,
// and resources/read of a stored artifact.
func TestEra20250618(t *testing.T) {
	t.Parallel()
	for name, start := range map[string]func(*testing.T, []string, []string) eraServer{"stdio": stdioEra, "http": httpEra} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args, env, runsc, artifacts := eraArgs(t)
			s := start(t, args, env)
			p := &person{}
			c := s.open(t, p)
			require.Equal(t, era2025, c.ProtocolVersion())

			list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
			require.NoError(t, err)
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			require.Subset(t, names, []string{"read_file", "write_file", "list_directory", "search_files"})

			call := func(tool string, args map[string]any) *mcp.CallToolResult {
				req := mcp.CallToolRequest{}
				req.Params.Name, req.Params.Arguments = tool, args
				res, err := c.CallTool(ctxT(t), req)
				require.NoError(t, err)
				return res
			}
			res := call("read_file", map[string]any{"path": "hello.txt"})
			require.False(t, res.IsError)
			require.NotNil(t, res.StructuredContent, "2025-06-18 has structured output")
			require.Contains(t, jsonText(t, res.StructuredContent), "hello from toolwarden")

			res = call("read_file", map[string]any{"path": "../outside.txt"})
			require.True(t, res.IsError)
			e, ok := toolerr.FromResult(res)
			require.True(t, ok, "the error's fields arrive under _meta")
			require.Equal(t, toolerr.PathOutsideWorkspace, e.Code)
			require.NotContains(t, res.Content[0].(mcp.TextContent).Text, secret)

			p.set(mcp.ElicitationResponseActionAccept, false, 0)
			require.Empty(t, write(t, c, "out/era.txt", "approved in 2025-06-18\n"))
			require.Equal(t, "approved in 2025-06-18\n", readWS(s.ws, "out/era.txt"))
			require.Equal(t, 1, p.asked(), "the approval was asked by elicitation")
			p.set(mcp.ElicitationResponseActionDecline, false, 0)
			require.Equal(t, "denied.approval_declined", write(t, c, "out/no.txt", "declined\n"))
			require.Equal(t, "<missing>", readWS(s.ws, "out/no.txt"))

			t.Run("progress", func(t *testing.T) {
				if runsc == "" {
					testenv.Missing(t, "no current runsc (run scripts/sandbox-setup)")
				}
				var mu sync.Mutex
				var progress []float64
				c.OnNotification(func(n mcp.JSONRPCNotification) {
					if n.Method == "notifications/progress" {
						mu.Lock()
						defer mu.Unlock()
						v, _ := n.Params.AdditionalFields["progress"].(float64)
						progress = append(progress, v)
					}
				})
				req := mcp.CallToolRequest{}
				req.Params.Name, req.Params.Arguments = "run_script", pythonScript
				req.Params.Meta = &mcp.Meta{ProgressToken: "era-run"}
				res, err := c.CallTool(ctxT(t), req)
				require.NoError(t, err)
				require.False(t, res.IsError, "%+v", res.Content)
				checkScriptOutput(t, jsonText(t, res.StructuredContent)+res.Content[0].(mcp.TextContent).Text)
				mu.Lock()
				defer mu.Unlock()
				require.NotEmpty(t, progress, "a 6 s run reports progress every 2 s")
			})

			t.Run("resources", func(t *testing.T) {
				if !artifacts {
					testenv.Missing(t, "no artifact store (TOOLWARDEN_ARTIFACTS_ENDPOINT; scripts/services) offers a resource")
				}
				task := uuid.NewString()
				res := call("store_artifact", map[string]any{"task_id": task, "name": "hello.txt", "content": "hello era\n", "encoding": "text"})
				require.False(t, res.IsError, "%+v", res.Content)
				req := mcp.ReadResourceRequest{}
				req.Params.URI = "artifact://tasks/" + task + "/hello.txt"
				read, err := c.ReadResource(ctxT(t), req)
				require.NoError(t, err)
				require.Equal(t, "hello era\n", read.Contents[0].(mcp.TextResourceContents).Text)
			})

			require.Eventually(t, func() bool { return len(negotiatedIn(s.log.String())) > 0 },
				time.Minute, 50*time.Millisecond, "the server logs the session's revision: %s", s.log.String())
			for _, v := range negotiatedIn(s.log.String()) {
				require.Equal(t, era2025, v)
			}
		})
	}
}
