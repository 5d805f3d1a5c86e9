package mcpserver_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

const benchSize = 1 << 20

// artifactBench is an in-process client of a server over the shared MinIO,
// with caps raised so that 1 MiB goes through in one call, and 1 MiB of
// random bytes.
func artifactBench(b *testing.B) (*client.Client, []byte) {
	testenv.Need(b, "TOOLWARDEN_ARTIFACTS_ENDPOINT")
	f := newFixture(b)
	f.cfg.Policy.Allow = append(f.cfg.Policy.Allow, artifactTools...)
	f.cfg.Limits.MaxOutputBytesPerCall = 8 << 20
	f.cfg.Limits.MaxOutputBytesPerSession = 1 << 40
	f.cfg.Artifacts.MaxInlineBytes = 2 << 20
	data := make([]byte, benchSize)
	_, _ = rand.Read(data)
	return inProcess(b, f.server(b)), data
}

// BenchmarkArtifactStore1MiB stores 1 MiB, base64, through the whole server
// (protocol, guard, audit, tool, MinIO) with an in-process client.
func BenchmarkArtifactStore1MiB(b *testing.B) {
	c, data := artifactBench(b)
	req := mcp.CallToolRequest{}
	req.Params.Name = "store_artifact"
	req.Params.Arguments = map[string]any{"task_id": uuid.NewString(), "name": "bench.bin",
		"content": base64.StdEncoding.EncodeToString(data), "encoding": "base64", "overwrite": true}
	b.SetBytes(benchSize)
	b.ReportAllocs()
	for b.Loop() {
		if res, err := c.CallTool(context.Background(), req); err != nil || res.IsError {
			b.Fatalf("store failed: %v %+v", err, res)
		}
	}
}

// BenchmarkArtifactRetrieve1MiB retrieves 1 MiB, base64, the same way.
func BenchmarkArtifactRetrieve1MiB(b *testing.B) {
	c, data := artifactBench(b)
	task := uuid.NewString()
	store := mcp.CallToolRequest{}
	store.Params.Name = "store_artifact"
	store.Params.Arguments = map[string]any{"task_id": task, "name": "bench.bin",
		"content": base64.StdEncoding.EncodeToString(data), "encoding": "base64"}
	res, err := c.CallTool(context.Background(), store)
	require.NoError(b, err)
	require.False(b, res.IsError, "%+v", res.Content)
	req := mcp.CallToolRequest{}
	req.Params.Name = "retrieve_artifact"
	req.Params.Arguments = map[string]any{"task_id": task, "name": "bench.bin"}
	b.SetBytes(benchSize)
	b.ReportAllocs()
	for b.Loop() {
		if res, err := c.CallTool(context.Background(), req); err != nil || res.IsError {
			b.Fatalf("retrieve failed: %v %+v", err, res)
		}
	}
}

// bareMinIO is a plain minio-go client of the shared MinIO, the baseline.
func bareMinIO(b *testing.B) (*minio.Client, string) {
	env := testenv.Need(b, "TOOLWARDEN_ARTIFACTS_ENDPOINT", "TOOLWARDEN_ARTIFACTS_ACCESS_KEY", "TOOLWARDEN_ARTIFACTS_SECRET_KEY")
	c, err := minio.New(env[0], &minio.Options{Creds: credentials.NewStaticV4(env[1], env[2], ""), Region: "us-east-1"})
	require.NoError(b, err)
	bucket := os.Getenv("TOOLWARDEN_ARTIFACTS_BUCKET")
	if bucket == "" {
		bucket = "toolwarden-artifacts"
	}
	return c, bucket
}

// BenchmarkBareMinIOPut1MiB is minio-go's PutObject of 1 MiB, for comparison.
func BenchmarkBareMinIOPut1MiB(b *testing.B) {
	c, bucket := bareMinIO(b)
	data := make([]byte, benchSize)
	_, _ = rand.Read(data)
	key := "tasks/" + uuid.NewString() + "/artifacts/bare.bin"
	b.SetBytes(benchSize)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.PutObject(context.Background(), bucket, key, bytes.NewReader(data), benchSize, minio.PutObjectOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareMinIOGet1MiB is minio-go's GetObject of 1 MiB, for comparison.
func BenchmarkBareMinIOGet1MiB(b *testing.B) {
	c, bucket := bareMinIO(b)
	data := make([]byte, benchSize)
	_, _ = rand.Read(data)
	key := "tasks/" + uuid.NewString() + "/artifacts/bare.bin"
	_, err := c.PutObject(context.Background(), bucket, key, bytes.NewReader(data), benchSize, minio.PutObjectOptions{})
	require.NoError(b, err)
	b.SetBytes(benchSize)
	b.ReportAllocs()
	for b.Loop() {
		obj, err := c.GetObject(context.Background(), bucket, key, minio.GetObjectOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if n, err := io.Copy(io.Discard, obj); err != nil || n != benchSize {
			b.Fatal(n, err)
		}
		obj.Close()
	}
}

// artifactServerSide is a server over the shared MinIO, initialized, for
// benchmarks that hand it JSON-RPC messages directly: the server's share of
// a call, without mcp-go's client.
func artifactServerSide(b *testing.B) (func(msg []byte) []byte, []byte) {
	testenv.Need(b, "TOOLWARDEN_ARTIFACTS_ENDPOINT")
	f := newFixture(b)
	f.cfg.Policy.Allow = append(f.cfg.Policy.Allow, artifactTools...)
	f.cfg.Limits.MaxOutputBytesPerCall = 8 << 20
	f.cfg.Limits.MaxOutputBytesPerSession = 1 << 40
	f.cfg.Artifacts.MaxInlineBytes = 2 << 20
	srv := f.server(b)
	ctx := context.Background()
	srv.MCP().HandleMessage(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`))
	data := make([]byte, benchSize)
	_, _ = rand.Read(data)
	return func(msg []byte) []byte {
		out, err := json.Marshal(srv.MCP().HandleMessage(ctx, msg))
		if err != nil || bytes.Contains(out, []byte(`"isError":true`)) || bytes.Contains(out, []byte(`"error":{`)) {
			b.Fatalf("bad response %.300s", out)
		}
		return out
	}, data
}

func toolCallMessage(b *testing.B, name string, args map[string]any) []byte {
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}})
	require.NoError(b, err)
	return msg
}

// BenchmarkArtifactStore1MiBServerSide is the server's share of a 1 MiB
// store: one JSON-RPC message in (already encoded), the response out.
func BenchmarkArtifactStore1MiBServerSide(b *testing.B) {
	handle, data := artifactServerSide(b)
	msg := toolCallMessage(b, "store_artifact", map[string]any{"task_id": uuid.NewString(), "name": "bench.bin",
		"content": base64.StdEncoding.EncodeToString(data), "encoding": "base64", "overwrite": true})
	b.SetBytes(benchSize)
	b.ReportAllocs()
	for b.Loop() {
		handle(msg)
	}
}

// BenchmarkArtifactRetrieve1MiBServerSide is the server's share of a 1 MiB
// retrieve.
func BenchmarkArtifactRetrieve1MiBServerSide(b *testing.B) {
	handle, data := artifactServerSide(b)
	task := uuid.NewString()
	handle(toolCallMessage(b, "store_artifact", map[string]any{"task_id": task, "name": "bench.bin",
		"content": base64.StdEncoding.EncodeToString(data), "encoding": "base64"}))
	msg := toolCallMessage(b, "retrieve_artifact", map[string]any{"task_id": task, "name": "bench.bin"})
	b.SetBytes(benchSize)
	b.ReportAllocs()
	for b.Loop() {
		handle(msg)
	}
}
