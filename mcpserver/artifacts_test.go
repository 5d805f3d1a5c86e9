package mcpserver_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/mcpserver"
	"github.com/toolwarden/toolwarden/tools/artifacts"
)

var artifactTools = []string{"store_artifact", "retrieve_artifact", "list_artifacts"}

// artifactFixture is a fixture whose artifact store is a private MinIO,
// with the artifact tools allowed.
func artifactFixture(t *testing.T) (*fixture, *testenv.MinIO) {
	m := testenv.StartMinIO(t)
	m.Env(t)
	f := newFixture(t)
	f.cfg.Policy.Allow = append(f.cfg.Policy.Allow, artifactTools...)
	return f, m
}

func TestArtifactsHiddenByDefault(t *testing.T) {
	testenv.Need(t, "TOOLWARDEN_ARTIFACTS_ENDPOINT")
	f := newFixture(t)
	b := f.server(t)
	require.Nil(t, unavailable(b, "artifacts"), "scripts/services env configures the artifact store")
	c := inProcess(t, b)
	list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	for _, name := range artifactTools {
		require.NotContains(t, toolNames(list.Tools), name)
	}
	res := callTool(t, c, "store_artifact", map[string]any{"task_id": uuid.NewString(), "name": "x", "content": "y", "encoding": "text"})
	require.Equal(t, toolerr.DeniedNotAllowed, errorOf(t, res).Code)
	_, err = c.ListResources(ctxT(t), mcp.ListResourcesRequest{})
	require.Error(t, err, "no resources are offered while retrieve_artifact is not allowed")
}

func TestInProcessArtifacts(t *testing.T) {
	f, _ := artifactFixture(t)
	c := inProcess(t, f.server(t))
	list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	require.Subset(t, toolNames(list.Tools), artifactTools)

	task := uuid.NewString()
	data := make([]byte, 5000)
	_, _ = rand.Read(data)
	sum := sha256.Sum256(data)
	var st artifacts.StoreOut
	structured(t, callTool(t, c, "store_artifact", map[string]any{"task_id": task, "name": "blob.bin",
		"content": base64.StdEncoding.EncodeToString(data), "encoding": "base64"}), &st)
	require.Equal(t, "tasks/"+task+"/artifacts/blob.bin", st.Key)
	require.Equal(t, hex.EncodeToString(sum[:]), st.SHA256)

	var got artifacts.RetrieveOut
	structured(t, callTool(t, c, "retrieve_artifact", map[string]any{"key": st.Key}), &got)
	back, err := base64.StdEncoding.DecodeString(got.Content)
	require.NoError(t, err)
	require.Equal(t, data, back)

	var ls artifacts.ListOut
	structured(t, callTool(t, c, "list_artifacts", map[string]any{"task_id": task}), &ls)
	require.Len(t, ls.Artifacts, 1)

	res := callTool(t, c, "store_artifact", map[string]any{"task_id": task, "name": "blob.bin", "content": "x", "encoding": "text"})
	require.Equal(t, toolerr.AlreadyExists, errorOf(t, res).Code)
	res = callTool(t, c, "store_artifact", map[string]any{"task_id": task, "name": "x", "content": "x", "encoding": "text", "bucket": "other"})
	require.Equal(t, toolerr.InvalidSchema, errorOf(t, res).Code, "the model cannot name a bucket")
	res = callTool(t, c, "retrieve_artifact", map[string]any{"key": "tasks/../secrets/x"})
	require.Equal(t, toolerr.InvalidArgument, errorOf(t, res).Code)
	res = callTool(t, c, "store_artifact", map[string]any{"task_id": task, "name": "x", "content": "x", "encoding": "hex"})
	require.Equal(t, toolerr.InvalidSchema, errorOf(t, res).Code, "encoding is an enum in the schema")
}

func TestInProcessArtifactResources(t *testing.T) {
	f, _ := artifactFixture(t)
	c := inProcess(t, f.server(t))
	task := uuid.NewString()
	for _, name := range []string{"notes.md", "image.png"} {
		content, enc := "# notes\n", "text"
		if name == "image.png" {
			content, enc = base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n\x00")), "base64"
		}
		res := callTool(t, c, "store_artifact", map[string]any{"task_id": task, "name": name, "content": content, "encoding": enc})
		require.False(t, res.IsError, "%+v", res.Content)
	}

	templates, err := c.ListResourceTemplates(ctxT(t), mcp.ListResourceTemplatesRequest{})
	require.NoError(t, err)
	require.Len(t, templates.ResourceTemplates, 1)
	require.Equal(t, "artifact://tasks/{task_id}/{name}", templates.ResourceTemplates[0].URITemplate.Raw())

	list, err := c.ListResources(ctxT(t), mcp.ListResourcesRequest{})
	require.NoError(t, err)
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	require.ElementsMatch(t, []string{"artifact://tasks/" + task + "/notes.md", "artifact://tasks/" + task + "/image.png"}, uris)

	read := func(uri string) (*mcp.ReadResourceResult, error) {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		return c.ReadResource(ctxT(t), req)
	}
	out, err := read("artifact://tasks/" + task + "/notes.md")
	require.NoError(t, err)
	text, ok := out.Contents[0].(mcp.TextResourceContents)
	require.True(t, ok)
	require.Equal(t, "# notes\n", text.Text)
	out, err = read("artifact://tasks/" + task + "/image.png")
	require.NoError(t, err)
	blob, ok := out.Contents[0].(mcp.BlobResourceContents)
	require.True(t, ok)
	require.Equal(t, base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n\x00")), blob.Blob)

	for uri, want := range map[string]string{
		"artifact://tasks/" + task + "/missing.txt": "not_found",
		"artifact://tasks/" + task + "/..%2fsecret": "invalid_argument",
		"artifact://tasks/" + task + "/.hidden":     "invalid_argument",
		"artifact://tasks/NOT-A-UUID/notes.md":      "invalid_argument",
	} {
		_, err := read(uri)
		require.Error(t, err, uri)
		require.Contains(t, err.Error(), want, uri)
	}
	_, err = read("artifact://tasks/" + task + "/a/b")
	require.Error(t, err, "a URI outside the template is not a resource")

	// Every read, refused or not, is one audited retrieve_artifact call.
	reads := 0
	for _, e := range audittest.Entries(t, f.auditPath) {
		if e.Tool == "retrieve_artifact" && e.Outcome != guard.Allow {
			reads++
		}
	}
	require.Equal(t, 6, reads)
}

// TestInProcessArtifactStoreDown stops the store mid-session: the tools
// answer backend.unavailable, then work again when it is back.
func TestInProcessArtifactStoreDown(t *testing.T) {
	f, m := artifactFixture(t)
	c := inProcess(t, f.server(t))
	task := uuid.NewString()
	args := map[string]any{"task_id": task, "name": "a.txt", "content": "a", "encoding": "text"}
	require.False(t, callTool(t, c, "store_artifact", args).IsError)
	m.Stop()
	res := callTool(t, c, "retrieve_artifact", map[string]any{"task_id": task, "name": "a.txt"})
	e := errorOf(t, res)
	require.Equal(t, toolerr.BackendUnavailable, e.Code)
	require.NotContains(t, e.Message, m.Endpoint)
	m.Start(t)
	var got artifacts.RetrieveOut
	structured(t, callTool(t, c, "retrieve_artifact", map[string]any{"task_id": task, "name": "a.txt"}), &got)
	require.Equal(t, "a", got.Content)
}

// TestArtifactsUnavailable: bad credentials at start leave the toolset out
// with the reason; no tools, no resources.
func TestArtifactsUnavailable(t *testing.T) {
	m := testenv.StartMinIO(t)
	m.Env(t)
	t.Setenv("TOOLWARDEN_ARTIFACTS_SECRET_KEY", "not-the-secret-0123456789")
	f := newFixture(t)
	f.cfg.Policy.Allow = append(f.cfg.Policy.Allow, artifactTools...)
	b := f.server(t)
	u := unavailable(b, "artifacts")
	require.NotNil(t, u)
	require.Contains(t, u.Reason, "SignatureDoesNotMatch")
	require.NotContains(t, u.Reason, "not-the-secret")
	for _, tl := range b.Tools {
		require.NotContains(t, artifactTools, tl.Tool.Name)
	}
}

// unavailable returns the entry of toolset in b.Unavailable, or nil.
func unavailable(b *mcpserver.Built, toolset string) *mcpserver.Unavailable {
	for i := range b.Unavailable {
		if b.Unavailable[i].Toolset == toolset {
			return &b.Unavailable[i]
		}
	}
	return nil
}
