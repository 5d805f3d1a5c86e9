package artifacts

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
)

// fakeObjects is objects in memory, with the S3 behaviour the tools rely
// on: a PUT publishes its object only once its whole body was read without
// error, If-None-Match: * refuses an existing key, a missing key is
// NoSuchKey, and a listing comes as minio-go's ListObjects sends it.
// TestObjectsContract runs the same checks against it and real MinIO.
type fakeObjects struct {
	mu   sync.Mutex
	objs map[string]fakeObject
}

type fakeObject struct {
	data []byte
	info minio.ObjectInfo
}

func newFakeObjects() *fakeObjects { return &fakeObjects{objs: map[string]fakeObject{}} }

func (f *fakeObjects) Put(ctx context.Context, key string, body io.Reader, size int64, opts minio.PutObjectOptions) (minio.UploadInfo, error) {
	if err := ctx.Err(); err != nil {
		return minio.UploadInfo{}, err
	}
	data, err := readBody(body, size)
	if err != nil {
		return minio.UploadInfo{}, err
	}
	sum := md5.Sum(data)
	info := minio.ObjectInfo{Key: key, Size: size, ETag: hex.EncodeToString(sum[:]), LastModified: time.Now().UTC(),
		ContentType: opts.Header().Get("Content-Type")}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.objs[key]; ok && opts.Header().Get("If-None-Match") == "*" {
		return minio.UploadInfo{}, minio.ErrorResponse{Code: "PreconditionFailed", StatusCode: http.StatusPreconditionFailed, Key: key,
			Message: "At least one of the pre-conditions you specified did not hold"}
	}
	f.objs[key] = fakeObject{data: data, info: info}
	return minio.UploadInfo{Key: key, Size: size, ETag: info.ETag, LastModified: info.LastModified}, nil
}

// readBody reads the size bytes minio-go sends of a body of known length:
// a body that fails or ends early is an error; bytes past size are not
// read, and not stored (TestObjectsContract shows MinIO does the same).
func readBody(body io.Reader, size int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(body, size))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) < size {
		return nil, fmt.Errorf("http: ContentLength=%d with Body length %d", size, len(data))
	}
	return data, nil
}

func (f *fakeObjects) Get(ctx context.Context, key string, offset, length int64) (io.ReadCloser, minio.ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, minio.ObjectInfo{}, err
	}
	if offset < 0 || length <= 0 {
		return nil, minio.ObjectInfo{}, fmt.Errorf("invalid range: offset %d, length %d", offset, length)
	}
	f.mu.Lock()
	obj, ok := f.objs[key]
	f.mu.Unlock()
	if !ok {
		return nil, minio.ObjectInfo{}, minio.ErrorResponse{Code: "NoSuchKey", StatusCode: http.StatusNotFound, Key: key,
			Message: "The specified key does not exist."}
	}
	size := int64(len(obj.data))
	if offset >= size {
		return io.NopCloser(bytes.NewReader(nil)), obj.info, nil
	}
	end := offset + min(length, size-offset)
	return io.NopCloser(bytes.NewReader(obj.data[offset:end])), obj.info, nil
}

// List sends what ListObjectsV2 would, page by page: MaxKeys is the page
// size (default 1000), not a total, and minio-go sends each page's objects
// before its common prefixes. StartAfter applies to keys before they are
// rolled up into common prefixes.
func (f *fakeObjects) List(ctx context.Context, opts minio.ListObjectsOptions, fn func(minio.ObjectInfo) bool) error {
	entries := f.entries(opts)
	page := opts.MaxKeys
	if page <= 0 || page > 1000 {
		page = 1000
	}
	for chunk := range slices.Chunk(entries, page) {
		for _, prefixes := range []bool{false, true} {
			for _, e := range chunk {
				if e.prefix != prefixes {
					continue
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				if !fn(e.info) {
					return nil
				}
			}
		}
	}
	return ctx.Err()
}

type fakeEntry struct {
	info   minio.ObjectInfo
	prefix bool // a common prefix, not an object
}

// entries is what opts selects, in key order, with the keys below a "/"
// after the prefix rolled up into one common prefix unless recursive.
func (f *fakeObjects) entries(opts minio.ListObjectsOptions) []fakeEntry {
	f.mu.Lock()
	defer f.mu.Unlock()
	keys := make([]string, 0, len(f.objs))
	for k := range f.objs {
		if strings.HasPrefix(k, opts.Prefix) && k > opts.StartAfter {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []fakeEntry
	for _, k := range keys {
		if i := strings.Index(k[len(opts.Prefix):], "/"); i >= 0 && !opts.Recursive {
			cp := k[:len(opts.Prefix)+i+1]
			if n := len(out); n == 0 || !out[n-1].prefix || out[n-1].info.Key != cp {
				out = append(out, fakeEntry{info: minio.ObjectInfo{Key: cp}, prefix: true})
			}
			continue
		}
		i := f.objs[k].info
		out = append(out, fakeEntry{info: minio.ObjectInfo{Key: k, Size: i.Size, ETag: i.ETag, LastModified: i.LastModified}})
	}
	return out
}
