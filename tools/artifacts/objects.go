package artifacts

import (
	"context"
	"io"

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
	// Get opens key and reports its metadata before its body is read. A
	// missing key gives an error whose S3 code is NoSuchKey.
	Get(ctx context.Context, key string) (io.ReadCloser, minio.ObjectInfo, error)
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

// Get sends the GET at once (Stat does), so a missing key or an
// unreachable store is an error here, not on the first Read.
func (b bucketObjects) Get(ctx context.Context, key string) (io.ReadCloser, minio.ObjectInfo, error) {
	obj, err := b.client.GetObject(ctx, b.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, minio.ObjectInfo{}, err
	}
	info, err := obj.Stat()
	if err != nil {
		obj.Close()
		return nil, info, err
	}
	return obj, info, nil
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
