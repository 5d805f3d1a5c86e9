package configs

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/toolwarden/toolwarden/internal/lazyregexp"
)

// AuditSyncModes are the values of audit.sync.
var AuditSyncModes = []string{"always", "interval", "none"}

// minAuditBytes keeps audit.max_bytes above a few lines, so that a typo
// (a size in KiB) does not rotate at every call.
const minAuditBytes = 4096

// Bounds on shipping and anchoring: a queue of a million lines is ~400 MB
// held in memory; anchors more often than every second would be one S3
// PUT per burst of calls.
const (
	maxShipQueue   = 1 << 20
	minAnchorEvery = time.Second
)

// AuditShip sends every audit line to a sink as well (audit.ship).
type AuditShip struct {
	// Syslog is udp://host:port, tcp://host:port or unix:///path; empty
	// is off.
	Syslog string `mapstructure:"syslog" yaml:"syslog"`
	// Queue bounds the lines waiting for the sink; beyond it lines are
	// dropped and counted, never the call held up.
	Queue int `mapstructure:"queue" yaml:"queue"`
	// OTLP is the OTLP/HTTP logs endpoint of an OpenTelemetry collector
	// (https://host:4318/v1/logs; http:// only to a loopback host); empty
	// is off. Lines wait in a spool on disk while it is down.
	OTLP string `mapstructure:"otlp" yaml:"otlp"`
	// Spool is the spool's directory; empty is .<log name>.otlp-spool
	// beside the log. SpoolMaxBytes bounds it: beyond it new lines are
	// dropped and counted.
	Spool         string `mapstructure:"spool" yaml:"spool"`
	SpoolMaxBytes int64  `mapstructure:"spool_max_bytes" yaml:"spool_max_bytes"`
}

// Bounds on the OTLP spool: at least 1 MiB (a few thousand lines), at
// most 1 TiB.
const (
	minSpoolBytes = 1 << 20
	maxSpoolBytes = 1 << 40
)

// AuditAnchor writes the chain head to S3 every Every (audit.anchor),
// through the artifacts section's S3 server and credentials.
type AuditAnchor struct {
	Bucket string        `mapstructure:"bucket" yaml:"bucket"`
	Prefix string        `mapstructure:"prefix" yaml:"prefix"`
	Every  time.Duration `mapstructure:"every" yaml:"every"`
}

// AuditCheckpointEvery is how often a signed checkpoint is written
// (audit.checkpoint_every): after Lines lines, and Interval after an
// unsigned line, whichever comes first; also at rotation and shutdown.
type AuditCheckpointEvery struct {
	Lines    int           `mapstructure:"lines" yaml:"lines"`
	Interval time.Duration `mapstructure:"interval" yaml:"interval"`
}

// Bounds on checkpoints: at least 100 lines, so that at most one call in
// a hundred pays for a signature (~20 µs) and a call's p99 does not move;
// at most a million lines and a day, so that a signature is never far.
const (
	minCheckpointLines    = 100
	maxCheckpointLines    = 1_000_000
	minCheckpointInterval = time.Second
	maxCheckpointInterval = 24 * time.Hour
)

// replicaID is what a replica may be called: it is written into every
// line and is part of the anchors' S3 keys.
var replicaID = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Replica is the replica ID lines are written with: audit.replica_id
// (cluster.replica_id when only that is set, see Load), or the host name.
func (a Audit) Replica() string {
	if a.ReplicaID != "" {
		return a.ReplicaID
	}
	if h, err := os.Hostname(); err == nil && replicaID.MatchString(h) {
		return h
	}
	return "unknown-host"
}

func (a Audit) validate(add func(string, string, ...any), store Artifacts) {
	if !slices.Contains(AuditSyncModes, a.Sync) {
		add("audit.sync", "%q is not one of always, interval, none", a.Sync)
	}
	if a.MaxBytes != 0 && a.MaxBytes < minAuditBytes {
		add("audit.max_bytes", "must be 0 (no size rotation) or at least %d, got %d", minAuditBytes, a.MaxBytes)
	}
	if a.MaxAge != 0 && a.MaxAge < time.Minute {
		add("audit.max_age", "must be 0 (no age rotation) or at least 1m, got %s", a.MaxAge)
	}
	if a.Keep < 0 {
		add("audit.keep", "must be 0 (keep all) or more, got %d", a.Keep)
	}
	if a.ReplicaID != "" && !replicaID.MatchString(a.ReplicaID) {
		add("audit.replica_id", "%q is not a replica ID (1-64 letters, digits, '.', '_' and '-', starting with a letter or digit)", a.ReplicaID)
	}
	a.CheckpointEvery.validate(add)
	if strings.ContainsRune(a.SigningKeyFile, 0) {
		add("audit.signing_key_file", "holds a NUL byte")
	}
	a.Ship.validate(add)
	a.Anchor.validate(add)
	if a.Anchor.Bucket != "" && !store.Configured() {
		add("audit.anchor.bucket", "anchors go to the S3 server of artifacts.endpoint (with its region, use_tls and credentials), which is not set")
	}
}

func (s AuditShip) validate(add func(string, string, ...any)) {
	if s.Queue < 1 || s.Queue > maxShipQueue {
		add("audit.ship.queue", "must be 1 to %d, got %d", maxShipQueue, s.Queue)
	}
	if s.Syslog != "" {
		if _, _, err := SyslogTarget(s.Syslog); err != nil {
			add("audit.ship.syslog", "%v", err)
		}
	}
	if s.OTLP == "" {
		return
	}
	if _, err := OTLPEndpoint(s.OTLP); err != nil {
		add("audit.ship.otlp", "%v", err)
	}
	if s.SpoolMaxBytes < minSpoolBytes || s.SpoolMaxBytes > maxSpoolBytes {
		add("audit.ship.spool_max_bytes", "must be %d (1 MiB) to %d (1 TiB), got %d", minSpoolBytes, maxSpoolBytes, s.SpoolMaxBytes)
	}
	if strings.ContainsRune(s.Spool, 0) {
		add("audit.ship.spool", "holds a NUL byte")
	}
}

// OTLPEndpoint checks audit.ship.otlp and returns the URL to POST to: an
// http or https URL with a host, no credentials, query nor fragment (an
// API key goes in OTEL_EXPORTER_OTLP_LOGS_HEADERS, never in the config),
// plain http only to a loopback host (audit lines name identities and
// tools, so they do not cross a network in clear), and /v1/logs as the
// path when it has none.
func OTLPEndpoint(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return "", fmt.Errorf("%q is not an OTLP/HTTP URL such as https://collector:4318/v1/logs", raw)
	}
	switch {
	case u.User != nil:
		return "", fmt.Errorf("%q holds credentials: put them in OTEL_EXPORTER_OTLP_LOGS_HEADERS (e.g. Authorization=Bearer%%20...), not in the config", raw)
	case u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("%q must have no query nor fragment", raw)
	case u.Scheme == "http" && !IsLoopback(u.Hostname()):
		return "", fmt.Errorf("%q sends audit lines in clear over the network: use https (plain http is for a loopback collector only)", raw)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/logs"
	}
	return u.String(), nil
}

// OTLPHeaders parses the OTEL_EXPORTER_OTLP_HEADERS form: key=value pairs
// separated by commas, values URL-encoded.
func OTLPHeaders(raw string) (http.Header, error) {
	h := http.Header{}
	for pair := range strings.SplitSeq(raw, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not key=value", pair)
		}
		val, err := url.QueryUnescape(strings.TrimSpace(v))
		if err != nil || strings.ContainsAny(val, "\r\n") {
			return nil, fmt.Errorf("header %s: the value is not a URL-encoded line", k)
		}
		h.Add(k, val)
	}
	return h, nil
}

// SyslogTarget splits audit.ship.syslog into a network and an address for
// net.Dial: udp, tcp (host:port) or unixgram (a socket path).
func SyslogTarget(raw string) (network, addr string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("%q is not a URL such as udp://host:514, tcp://host:601 or unix:///dev/log", raw)
	}
	switch {
	case (u.Scheme == "udp" || u.Scheme == "tcp") && u.Port() != "" && u.Hostname() != "" && strings.Trim(u.Path, "/") == "" && u.User == nil:
		return u.Scheme, u.Host, nil
	case u.Scheme == "unix" && u.Host == "" && strings.HasPrefix(u.Path, "/"):
		return "unixgram", u.Path, nil
	}
	return "", "", fmt.Errorf("%q is not udp://host:port, tcp://host:port or unix:///path/to/socket", raw)
}

func (a AuditAnchor) validate(add func(string, string, ...any)) {
	if a.Bucket == "" {
		return
	}
	if !bucketName.MatchString(a.Bucket) || strings.Contains(a.Bucket, "..") {
		add("audit.anchor.bucket", "%q is not an S3 bucket name (3-63 lowercase letters, digits, dots and hyphens)", a.Bucket)
	}
	if strings.HasPrefix(a.Prefix, "/") || strings.Contains(a.Prefix, "..") {
		add("audit.anchor.prefix", "%q must not start with / nor hold ..", a.Prefix)
	}
	if a.Every < minAnchorEvery {
		add("audit.anchor.every", "must be at least %s, got %s", minAnchorEvery, a.Every)
	}
}

func (c AuditCheckpointEvery) validate(add func(string, string, ...any)) {
	if c.Lines < minCheckpointLines || c.Lines > maxCheckpointLines {
		add("audit.checkpoint_every.lines", "must be %d to %d (a signature per batch of lines, never per call), got %d",
			minCheckpointLines, maxCheckpointLines, c.Lines)
	}
	if c.Interval < minCheckpointInterval || c.Interval > maxCheckpointInterval {
		add("audit.checkpoint_every.interval", "must be %s to %s, got %s", minCheckpointInterval, maxCheckpointInterval, c.Interval)
	}
}
