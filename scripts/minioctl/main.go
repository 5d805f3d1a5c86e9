// Command minioctl waits until the MinIO started by scripts/services answers
// and creates the artifact bucket, idempotently. It reads the settings that
// `scripts/services env minio` prints:
//
//	TOOLWARDEN_ARTIFACTS_ENDPOINT, TOOLWARDEN_ARTIFACTS_BUCKET,
//	TOOLWARDEN_ARTIFACTS_ACCESS_KEY, TOOLWARDEN_ARTIFACTS_SECRET_KEY
//
// Usage: go run ./scripts/minioctl [-wait 60s]
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

func main() {
	wait := flag.Duration("wait", 60*time.Second, "how long to wait for MinIO to be ready")
	flag.Parse()
	if err := run(*wait); err != nil {
		fmt.Fprintln(os.Stderr, "minioctl:", err)
		os.Exit(1)
	}
}

func run(wait time.Duration) error {
	endpoint, bucket := os.Getenv("TOOLWARDEN_ARTIFACTS_ENDPOINT"), os.Getenv("TOOLWARDEN_ARTIFACTS_BUCKET")
	access, secret := os.Getenv("TOOLWARDEN_ARTIFACTS_ACCESS_KEY"), os.Getenv("TOOLWARDEN_ARTIFACTS_SECRET_KEY")
	if endpoint == "" || bucket == "" || access == "" || secret == "" {
		return fmt.Errorf("set TOOLWARDEN_ARTIFACTS_ENDPOINT, _BUCKET, _ACCESS_KEY and _SECRET_KEY (eval \"$(scripts/services env minio)\")")
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := waitReady(ctx, "http://"+endpoint+"/minio/health/ready"); err != nil {
		return err
	}
	c, err := minio.New(endpoint, &minio.Options{Creds: credentials.NewStaticV4(access, secret, ""), Region: "us-east-1"})
	if err != nil {
		return err
	}
	ok, err := c.BucketExists(ctx, bucket)
	if err != nil || ok {
		return err
	}
	return c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: "us-east-1"})
}

// waitReady polls MinIO's readiness endpoint until it answers 200.
func waitReady(ctx context.Context, url string) error {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("MinIO at %s not ready: %v", url, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
