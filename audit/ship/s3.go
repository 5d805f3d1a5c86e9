package ship

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/toolwarden/toolwarden/configs"
)

// NewS3Client connects to the S3 server of the artifacts section (its
// endpoint, region, use_tls and the credentials in the variables it
// names), where anchors go. Like the artifact store's, it takes no
// ambient proxy and fails over quickly rather than retrying for long.
func NewS3Client(a configs.Artifacts) (*minio.Client, error) {
	if !a.Configured() {
		return nil, errors.New("audit.anchor needs artifacts.endpoint (the S3 server anchors go to)")
	}
	access, secret, err := a.Credentials(context.Background())
	if err != nil {
		return nil, fmt.Errorf("audit.anchor: %w", err)
	}
	tr, err := minio.DefaultTransport(a.UseTLS)
	if err != nil {
		return nil, err
	}
	tr.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.Proxy = nil
	return minio.New(a.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(access, secret, ""), Secure: a.UseTLS,
		Region: a.Region, Transport: tr, MaxRetries: 2})
}

// CheckBucket fails when the server answers that bucket does not exist: a
// misnamed bucket is a configuration error, said at start. A server that
// does not answer is not one: anchoring retries at each interval.
func CheckBucket(ctx context.Context, client *minio.Client, bucket string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ok, err := client.BucketExists(ctx, bucket)
	if err == nil && !ok {
		return fmt.Errorf("audit.anchor.bucket: bucket %q does not exist on %s", bucket, client.EndpointURL().Host)
	}
	return nil
}
