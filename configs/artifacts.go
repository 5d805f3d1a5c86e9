package configs

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/toolwarden/toolwarden/internal/lazyregexp"
)

// Bounds on the artifacts section. A store above 1 GiB would be a single
// PUT no client can send through a tool call anyway.
const (
	maxArtifactStoreBytes  = 1 << 30
	maxArtifactInlineBytes = 64 << 20
	maxArtifactListResults = 10000
)

var (
	// bucketName is S3's rule for new buckets, without the dotted-IP form.
	bucketName = lazyregexp.New(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	envVarName = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
	regionName = lazyregexp.New(`^[a-z0-9-]{0,64}$`)
)

// IsEnvVarName reports whether s can name an environment variable. Keys
// such as secret_key_env must hold a name, never the secret itself, and
// this is what tells them apart.
func IsEnvVarName(s string) bool { return envVarName.MatchString(s) }

// Configured reports whether an artifact store is set up.
func (a Artifacts) Configured() bool { return a.Endpoint != "" }

func (a Artifacts) validate(add func(string, string, ...any)) {
	bounded(add, "artifacts.max_store_bytes", a.MaxStoreBytes, maxArtifactStoreBytes)
	bounded(add, "artifacts.max_inline_bytes", a.MaxInlineBytes, maxArtifactInlineBytes)
	bounded(add, "artifacts.max_list_results", int64(a.MaxListResults), maxArtifactListResults)
	if !bucketName.MatchString(a.Bucket) || strings.Contains(a.Bucket, "..") {
		add("artifacts.bucket", "%q is not an S3 bucket name (3-63 lowercase letters, digits, dots and hyphens)", a.Bucket)
	}
	if !regionName.MatchString(a.Region) {
		add("artifacts.region", "%q is not a region name such as us-east-1", a.Region)
	}
	for _, kv := range [][3]string{{"artifacts.access_key_env", a.AccessKeyEnv, a.AccessKeyFile + a.AccessKeyVault},
		{"artifacts.secret_key_env", a.SecretKeyEnv, a.SecretKeyFile + a.SecretKeyVault}} {
		if !envVarName.MatchString(kv[1]) && kv[2] == "" {
			// The value is not echoed: it may be the credential itself.
			add(kv[0], "is not an environment variable name (letters, digits and _); name the variable that holds the credential, never the credential itself")
		}
	}
	if a.Endpoint != "" {
		if err := checkEndpoint(a.Endpoint); err != nil {
			add("artifacts.endpoint", "%v", err)
		}
	}
}

// checkEndpoint accepts host:port and nothing else: a scheme, a path or
// credentials in the endpoint are refused rather than guessed at.
func checkEndpoint(ep string) error {
	if strings.Contains(ep, "://") {
		return fmt.Errorf("%q has a scheme; write host:port and set artifacts.use_tls instead", ep)
	}
	host, port, err := net.SplitHostPort(ep)
	if err != nil {
		return fmt.Errorf("%q is not host:port: %v", ep, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q has no valid port", ep)
	}
	if host == "" || strings.ContainsAny(host, "/@?#% ") {
		return fmt.Errorf("%q is not host:port", ep)
	}
	return nil
}

func bounded(add func(string, string, ...any), key string, v, most int64) {
	if v <= 0 || v > most {
		add(key, "must be between 1 and %d, got %d", most, v)
	}
}

// artifactWidenings notes an artifact store reached without TLS on
// another machine: the artifacts travel in clear.
func artifactWidenings(l *Loaded) []string {
	a := l.Config.Artifacts
	if a.Endpoint == "" || a.UseTLS {
		return nil
	}
	host, _, _ := net.SplitHostPort(a.Endpoint)
	if IsLoopback(host) {
		return nil
	}
	return []string{fmt.Sprintf("artifacts.use_tls is false for the non-loopback endpoint %q (from %s)", a.Endpoint, l.Origin("artifacts.use_tls"))}
}
