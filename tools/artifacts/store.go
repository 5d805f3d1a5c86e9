package artifacts

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"mime"
	"strings"
	"unicode"

	"github.com/minio/minio-go/v7"
	"github.com/toolwarden/toolwarden/internal/artifactkey"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
)

// StoreIn is store_artifact's input.
type StoreIn struct {
	TaskID      string `json:"task_id" jsonschema:"UUID of the task the artifact belongs to, in canonical lower-case form"`
	Name        string `json:"name" jsonschema:"Plain file name of the artifact, e.g. report.md"`
	Content     string `json:"content" jsonschema:"The artifact's bytes: UTF-8 text, or standard padded base64 when encoding is base64"`
	Encoding    string `json:"encoding" jsonschema_description:"How content is written: text or base64" jsonschema:"enum=text,enum=base64"`
	ContentType string `json:"content_type,omitempty" jsonschema:"MIME type to record, e.g. text/markdown (default: text/plain in UTF-8 for text, application/octet-stream for base64)"`
	Overwrite   bool   `json:"overwrite,omitempty" jsonschema:"Replace an existing artifact of the same name (default false: storing an existing name fails)"`
}

// StoreOut is store_artifact's output.
type StoreOut struct {
	Key         string `json:"key" jsonschema:"The storage key, tasks/<task_id>/artifacts/<name>; record it, e.g. with link_artifact_to_task"`
	URI         string `json:"uri" jsonschema:"The artifact's MCP resource URI"`
	TaskID      string `json:"task_id"`
	Name        string `json:"name"`
	Size        int64  `json:"size" jsonschema:"Bytes stored"`
	SHA256      string `json:"sha256" jsonschema:"Hex SHA-256 of the bytes stored"`
	ETag        string `json:"etag" jsonschema:"The store's entity tag of the new object"`
	ContentType string `json:"content_type"`
}

const storeDesc = `Store a file produced during a task (a log, a report, code, data) as an artifact of that task, in the S3-compatible artifact store.

When to use: whenever a task produces a file that must outlive the conversation or be handed to another agent. If the graph tools are available, record the returned key on the task afterwards with link_artifact_to_task; the two calls stay separate.

Parameters:
- task_id (required): the task's UUID in canonical lower-case form.
- name (required): a plain file name: letters, digits and . _ - + = , @ ~ ( ), starting with a letter, digit or "_", no "..", at most 255 bytes. Paths, slashes and backslashes are refused, not cleaned.
- content (required): the bytes to store, as text or as base64.
- encoding (required): "text" (content is stored as its UTF-8 bytes) or "base64" (standard alphabet, padded, no line breaks; use it for binary files).
- content_type: MIME type to record; by default text/plain; charset=utf-8 for text and application/octet-stream for base64.
- overwrite: true to replace an artifact of the same name; by default storing an existing name fails.

Returns: key (tasks/<task_id>/artifacts/<name>, built by the server), uri (artifact://tasks/<task_id>/<name>), size, sha256, etag, content_type.

Errors: invalid_argument for a bad task_id, name, content_type or base64; limit.too_large over artifacts.max_store_bytes; already_exists when the name is taken and overwrite is not true; backend.unavailable when the store cannot be reached (try again later); backend.denied when the store refuses the server's credentials.

Side effects: writes one object in the artifact store, atomically: the artifact appears complete or not at all. With overwrite: true it replaces the previous content, which is lost. Needs approval.

Example: {"task_id": "0b6d3c7e-8f52-4a1e-9a59-3c1f2a4b5d6e", "name": "summary.md", "content": "# Summary\n", "encoding": "text", "content_type": "text/markdown"}`

func (s *Store) storeArtifact() tools.Tool {
	return tools.WithPreview(tools.New("store_artifact", storeDesc,
		tools.Annotations{Title: "Store task artifact", Destructive: true}, writeMeta, s.store), tools.PreviewOf(s.previewStore))
}

func (s *Store) store(ctx context.Context, in StoreIn) (StoreOut, error) {
	id, err := artifactkey.TaskID(in.TaskID)
	if err != nil {
		return StoreOut{}, err
	}
	if err := artifactkey.CheckName(in.Name); err != nil {
		return StoreOut{}, err
	}
	ct, err := contentType(in.ContentType, in.Encoding)
	if err != nil {
		return StoreOut{}, err
	}
	size, body, err := decodeContent(in.Content, in.Encoding)
	if err != nil {
		return StoreOut{}, err
	}
	if size > s.limits.MaxStoreBytes {
		return StoreOut{}, s.tooLarge(size)
	}
	key := artifactkey.Key(id, in.Name)
	info, sum, err := s.put(ctx, key, body, size, ct, in.Overwrite)
	if err != nil {
		return StoreOut{}, s.storeError(err, "store_artifact", id, in.Name)
	}
	return StoreOut{Key: key, URI: artifactkey.URI(id, in.Name), TaskID: id, Name: in.Name, Size: info.Size, SHA256: sum,
		ETag: info.ETag, ContentType: ct}, nil
}

// put streams body, which must hold exactly size bytes, to key in one PUT.
// The store publishes the object only once the whole body has arrived, so
// a body that fails half-way (bad base64, over the cap, a dropped
// connection) leaves nothing under key. Without overwrite the PUT carries
// If-None-Match: *, so the store itself refuses an existing key, with no
// window between a check and the write.
func (s *Store) put(ctx context.Context, key string, body io.Reader, size int64, ct string, overwrite bool) (minio.UploadInfo, string, error) {
	h := sha256.New()
	r := &cappedReader{r: body, left: s.limits.MaxStoreBytes, h: h}
	opts := minio.PutObjectOptions{ContentType: ct, DisableMultipart: true}
	if !overwrite {
		opts.SetMatchETagExcept("*")
	}
	info, err := s.objects.Put(ctx, key, r, size, opts)
	if r.err != nil {
		return minio.UploadInfo{}, "", r.err
	}
	if err != nil {
		return minio.UploadInfo{}, "", err
	}
	return info, hex.EncodeToString(h.Sum(nil)), nil
}

var errOverCap = errors.New("over the size cap")

// cappedReader hashes what it passes on and fails as soon as more than left
// bytes have been read, so the cap holds while the body streams, whatever
// size was announced. The first failure is kept in err: the HTTP client
// reports a failed body under its own error.
type cappedReader struct {
	r    io.Reader
	left int64
	h    hash.Hash
	err  error
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	c.left -= int64(n)
	if c.left < 0 {
		c.err = errOverCap
		return 0, c.err
	}
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

func (s *Store) tooLarge(size int64) error {
	return toolerr.New(toolerr.TooLarge, "Split the content into several artifacts, or ask the operator to raise artifacts.max_store_bytes.",
		"the artifact is %d bytes; the limit is %d", size, s.limits.MaxStoreBytes).WithRule("artifacts.max_store_bytes")
}

// decodeContent returns the decoded size of content and a reader of its
// bytes. Base64 is decoded while it streams; its size is known from its
// length, as the padded standard alphabet without line breaks is required.
func decodeContent(content, encoding string) (int64, io.Reader, error) {
	switch encoding {
	case "text":
		return int64(len(content)), strings.NewReader(content), nil
	case "base64":
		if len(content)%4 != 0 || strings.ContainsAny(content, "\r\n") {
			return 0, nil, toolerr.New(toolerr.InvalidArgument, "Send standard base64 (A-Z a-z 0-9 + /), padded with = to a multiple of 4 characters, on one line.",
				"content is not padded standard base64 on one line").WithRule("artifacts.base64")
		}
		tail := content[max(0, len(content)-2):]
		size := int64(len(content)/4*3 - (len(tail) - len(strings.TrimRight(tail, "="))))
		return size, &base64Reader{r: base64.NewDecoder(base64.StdEncoding, strings.NewReader(content))}, nil
	}
	return 0, nil, toolerr.New(toolerr.InvalidArgument, `Use "text" or "base64".`, "encoding %s is not text or base64", toolerr.Quote(encoding)).WithRule("artifacts.encoding")
}

// base64Reader reports corrupt input as an argument error.
type base64Reader struct{ r io.Reader }

func (b *base64Reader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	var corrupt base64.CorruptInputError
	if errors.As(err, &corrupt) {
		err = toolerr.New(toolerr.InvalidArgument, "Send standard base64 (A-Z a-z 0-9 + /), padded with =.",
			"content is not valid base64 (at byte %d)", int64(corrupt)).WithRule("artifacts.base64")
	}
	return n, err
}

// contentType checks a requested MIME type, or picks the default for the
// encoding.
func contentType(ct, encoding string) (string, error) {
	if ct == "" {
		if encoding == "base64" {
			return "application/octet-stream", nil
		}
		return "text/plain; charset=utf-8", nil
	}
	mt, params, err := mime.ParseMediaType(ct)
	out := ""
	if err == nil && len(ct) <= 255 && strings.Contains(mt, "/") && !strings.ContainsFunc(ct, unicode.IsControl) {
		out = mime.FormatMediaType(mt, params)
	}
	if out == "" {
		return "", toolerr.New(toolerr.InvalidArgument, `Use a MIME type such as "text/markdown" or "image/png", or leave content_type out.`,
			"content_type %s is not a MIME type", toolerr.Quote(ct)).WithRule("artifacts.content_type")
	}
	return out, nil
}
