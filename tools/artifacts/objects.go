package artifacts

import (
	"context"
	"io"
	"strconv"
	"strings"

	"github.com/minio/minio-go/v7"
)

// objects is all the tools need of the bucket. It is small so that the
// size-cap, partial-upload and naming logic can be tested against an
// in-memory fake as well as against a real store; the types are
// minio-go's, so errors keep their S3 codes (see storeError).
type objects interface {
	// Put writes key from body, which holds size bytes, in one request.
	// The object appears only if the whole body was read without error.
	Put(ctx context.Context, key string, body io.Reader, size int64, opts minio.PutObjectOptions) (minio.UploadInfo, error)
	// Get opens at most length (> 0) bytes of key from offset (>= 0) and
	// reports its metadata before the body is read; info.Size is the size
	// of the whole object, not of the range. An offset at or past the end
	// opens an empty body (the caller compares it with info.Size). A
	// missing key gives an error whose S3 code is NoSuchKey.
	Get(ctx context.Context, key string, offset, length int64) (io.ReadCloser, minio.ObjectInfo, error)
	// List calls fn for each entry opts selects, in the order ListObjects
	// sends them, until fn returns false; it stops the listing early
	// instead of draining every page.
	List(ctx context.Context, opts minio.ListObjectsOptions, fn func(minio.ObjectInfo) bool) error
}

// bucketObjects is objects over one bucket of a minio-go client.
type bucketObjects struct {
	client *minio.Client
	bucket string
}

func (b bucketObjects) Put(ctx context.Context, key string, body io.Reader, size int64, opts minio.PutObjectOptions) (minio.UploadInfo, error) {
	return b.client.PutObject(ctx, b.bucket, key, body, size, opts)
}

// Get sends one ranged GET at once, so a missing key or an unreachable
// store is an error here, not on the first Read. minio-go's Core is used
// because its GetObject returns the headers: the whole size is in
// Content-Range, and one request reads the range (minio-go's Object would
// send a HEAD first). S3 answers a range starting at or past the end with
// InvalidRange and no size, so then a HEAD gives the size.
func (b bucketObjects) Get(ctx context.Context, key string, offset, length int64) (io.ReadCloser, minio.ObjectInfo, error) {
	var opts minio.GetObjectOptions
	if err := opts.SetRange(offset, offset+length-1); err != nil {
		return nil, minio.ObjectInfo{}, err
	}
	body, info, h, err := minio.Core{Client: b.client}.GetObject(ctx, b.bucket, key, opts)
	if minio.ToErrorResponse(err).Code == "InvalidRange" {
		info, err = b.client.StatObject(ctx, b.bucket, key, minio.StatObjectOptions{})
		if err != nil {
			return nil, info, err
		}
		return io.NopCloser(strings.NewReader("")), info, nil
	}
	if err != nil {
		return nil, info, err
	}
	if total, ok := rangeTotal(h.Get("Content-Range")); ok {
		info.Size = total
	}
	return body, info, nil
}

// rangeTotal reads the whole size from a Content-Range header,
// "bytes 0-99/600000"; false when there is none (a 200 answer, where
// Content-Length already is the whole size) or it is "*".
func rangeTotal(v string) (int64, bool) {
	_, total, ok := strings.Cut(v, "/")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(total, 10, 64)
	return n, err == nil && n >= 0
}

func (b bucketObjects) List(ctx context.Context, opts minio.ListObjectsOptions, fn func(minio.ObjectInfo) bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for obj := range b.client.ListObjects(ctx, b.bucket, opts) {
		if obj.Err != nil {
			return obj.Err
		}
		if !fn(obj) {
			return nil
		}
	}
	return ctx.Err()
}
