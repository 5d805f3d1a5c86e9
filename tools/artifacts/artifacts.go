// Package artifacts implements the artifact tools over an S3-compatible
// store (MinIO, AWS S3, ...): store_artifact, retrieve_artifact and
// list_artifacts, and the same artifacts as MCP resources.
//
// The model never names a bucket or writes a key. Every key is
// tasks/<task uuid>/artifacts/<name>, built by Key from a canonical UUID and
// a name that passed CheckName; a key or URI the model hands back is parsed
// into those two parts and built again, never cleaned.
package artifacts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/tracing"
	"github.com/toolwarden/toolwarden/tools"
)

// Limits are the config's artifacts section.
type Limits = configs.Artifacts

// Store is the artifact toolset over one bucket.
type Store struct {
	objects objects       // what the tools use of the bucket
	client  *minio.Client // Probe's, which needs more than objects
	tr      *http.Transport
	bucket  string
	limits  Limits
	log     *slog.Logger
}

// ErrUnreachable wraps a Probe failure that is the network's, not the
// configuration's: the store may come back.
var ErrUnreachable = errors.New("artifact store unreachable")

// New returns the artifact toolset for cfg without a client: its tools are
// defined (the catalog lists them without reaching the store), and Connect
// binds them to the store before any call.
func New(cfg Limits, log *slog.Logger) *Store {
	return &Store{bucket: cfg.Bucket, limits: cfg, log: log}
}

// Open is New then Connect: a store with its client, ready to Probe.
func Open(cfg Limits, log *slog.Logger) (*Store, error) {
	s := New(cfg, log)
	if err := s.Connect(); err != nil {
		return nil, err
	}
	return s, nil
}

// Connect makes a client for the store the config names, with the
// credentials read from the environment variables it names. It sends no
// request; see Probe. It is called once, before the server serves.
func (s *Store) Connect() error {
	cfg := s.limits
	if !cfg.Configured() {
		return errors.New("not configured: set artifacts.endpoint (or TOOLWARDEN_ARTIFACTS_ENDPOINT)")
	}
	access, secret, err := cfg.Credentials(context.Background())
	if err != nil {
		return err
	}
	tr, err := minio.DefaultTransport(cfg.UseTLS)
	if err != nil {
		return err
	}
	tr.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.Proxy = nil // the store is named explicitly; an ambient proxy setting must not reroute it
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:     credentials.NewStaticV4(access, secret, ""),
		Secure:    cfg.UseTLS,
		Region:    cfg.Region,
		Transport: tracing.Transport(tr),
		// A call fails over to backend.unavailable quickly instead of
		// retrying for seconds; the model can call again.
		MaxRetries: 2,
	})
	if err != nil {
		return fmt.Errorf("artifacts.endpoint %q: %w", cfg.Endpoint, err)
	}
	s.client, s.tr = client, tr
	s.objects = bucketObjects{client: client, bucket: s.bucket}
	return nil
}

// Probe checks that the bucket exists and the credentials open it. A store
// that cannot be reached gives an error wrapping ErrUnreachable; rejected
// credentials or a missing bucket give another error.
func (s *Store) Probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ok, err := s.client.BucketExists(ctx, s.bucket)
	switch {
	case err == nil && ok:
		return nil
	case err == nil:
		return fmt.Errorf("bucket %q does not exist at %s", s.bucket, s.client.EndpointURL().Host)
	}
	resp := minio.ToErrorResponse(err)
	if resp.Code == "" || resp.StatusCode == http.StatusServiceUnavailable {
		return fmt.Errorf("%w at %s: %v", ErrUnreachable, s.client.EndpointURL().Host, err)
	}
	return fmt.Errorf("the store at %s refused bucket %q: %s (%s)", s.client.EndpointURL().Host, s.bucket, resp.Code, resp.Message)
}

// Close releases idle connections.
func (s *Store) Close() error {
	if s.tr != nil {
		s.tr.CloseIdleConnections()
	}
	return nil
}

// Tools returns the artifact tools, read-only ones first.
func (s *Store) Tools() []tools.Tool {
	return []tools.Tool{s.retrieveArtifact(), s.listArtifacts(), s.storeArtifact()}
}

var (
	readMeta  = tools.Meta{Toolset: "artifacts", Capabilities: []string{"s3:read:tasks/*"}}
	writeMeta = tools.Meta{Toolset: "artifacts", Capabilities: []string{"s3:write:tasks/*"}, RequiresApproval: true}
)
