package configs

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAuditDefaults(t *testing.T) {
	isolate(t)
	l, err := Load(Options{})
	require.NoError(t, err)
	require.Equal(t, Audit{Sync: "interval", MaxBytes: 64 << 20, Ship: defaultShip, Anchor: defaultAnchor,
		CheckpointEvery: defaultCheckpoints}, l.Config.Audit)
}

func TestAuditSettings(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", "audit:\n  sync: always\n  max_bytes: 1048576\n  max_age: 24h\n  keep: 5\n")
	l, err := Load(Options{File: "file.yaml"})
	require.NoError(t, err)
	require.Equal(t, Audit{Sync: "always", MaxBytes: 1 << 20, MaxAge: 24 * time.Hour, Keep: 5, Ship: defaultShip, Anchor: defaultAnchor,
		CheckpointEvery: defaultCheckpoints}, l.Config.Audit)
}

var (
	defaultShip        = AuditShip{Queue: 4096, SpoolMaxBytes: 1 << 30}
	defaultAnchor      = AuditAnchor{Prefix: "toolwarden-audit/", Every: time.Minute}
	defaultCheckpoints = AuditCheckpointEvery{Lines: 1000, Interval: time.Minute}
)

func TestAuditSigning(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", "audit:\n  signing_key_file: /etc/toolwarden/audit-signing.key\n  checkpoint_every:\n    lines: 500\n    interval: 10s\n")
	l, err := Load(Options{File: "file.yaml"})
	require.NoError(t, err)
	require.Equal(t, "/etc/toolwarden/audit-signing.key", l.Config.Audit.SigningKeyFile)
	require.Equal(t, AuditCheckpointEvery{Lines: 500, Interval: 10 * time.Second}, l.Config.Audit.CheckpointEvery)
}

func TestAuditShippingAndAnchors(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", "audit:\n  replica_id: eu-1.a\n  ship:\n    syslog: tcp://127.0.0.1:601\n    queue: 10\n"+
		"  anchor:\n    bucket: audit-anchors\n    prefix: fleet/\n    every: 30s\n"+
		"artifacts:\n  endpoint: 127.0.0.1:9000\n")
	l, err := Load(Options{File: "file.yaml"})
	require.NoError(t, err)
	a := l.Config.Audit
	require.Equal(t, "eu-1.a", a.Replica())
	require.Equal(t, AuditShip{Syslog: "tcp://127.0.0.1:601", Queue: 10, SpoolMaxBytes: 1 << 30}, a.Ship)
	require.Equal(t, AuditAnchor{Bucket: "audit-anchors", Prefix: "fleet/", Every: 30 * time.Second}, a.Anchor)
}

func TestAuditReplicaDefaultsToTheHostName(t *testing.T) {
	host, err := os.Hostname()
	require.NoError(t, err)
	require.Equal(t, host, Audit{}.Replica())
}

func TestSyslogTarget(t *testing.T) {
	for raw, want := range map[string][2]string{
		"udp://127.0.0.1:514": {"udp", "127.0.0.1:514"}, "tcp://logs.example:601": {"tcp", "logs.example:601"},
		"unix:///dev/log": {"unixgram", "/dev/log"},
	} {
		network, addr, err := SyslogTarget(raw)
		require.NoError(t, err)
		require.Equal(t, want, [2]string{network, addr})
	}
}

// TestOTLPEndpoint: a loopback collector may take plain http, anything
// else https; /v1/logs is the path when none is given.
func TestOTLPEndpoint(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:4318":                  "http://127.0.0.1:4318/v1/logs",
		"http://localhost:4318/":                 "http://localhost:4318/v1/logs",
		"http://[::1]:4318/v1/logs":              "http://[::1]:4318/v1/logs",
		"https://collector.example/otlp/v1/logs": "https://collector.example/otlp/v1/logs",
		"https://collector.example:4318":         "https://collector.example:4318/v1/logs",
	} {
		got, err := OTLPEndpoint(raw)
		require.NoError(t, err, raw)
		require.Equal(t, want, got)
	}
}

// TestOTLPHeaders: the OTEL_EXPORTER_OTLP_HEADERS form, and a value that
// would smuggle a header line refused.
func TestOTLPHeaders(t *testing.T) {
	h, err := OTLPHeaders("Authorization=Bearer%20abc, X-Scope-OrgID=tenant-1")
	require.NoError(t, err)
	require.Equal(t, "Bearer abc", h.Get("Authorization"))
	require.Equal(t, "tenant-1", h.Get("X-Scope-OrgID"))
	_, err = OTLPHeaders("A=b%0d%0aX-Injected: 1")
	require.ErrorContains(t, err, "header A: the value is not a URL-encoded line")
	_, err = OTLPHeaders("novalue")
	require.ErrorContains(t, err, `"novalue" is not key=value`)
}

func TestAuditRejectsBadValues(t *testing.T) {
	tests := []struct{ yaml, wantErr string }{
		{"audit:\n  sync: sometimes\n", `file.yaml:2: audit.sync: "sometimes" is not one of always, interval, none`},
		{"audit:\n  sync: \"\"\n", `audit.sync: "" is not one of always, interval, none`},
		{"audit:\n  max_bytes: 100\n", "audit.max_bytes: must be 0 (no size rotation) or at least 4096, got 100"},
		{"audit:\n  max_bytes: -1\n", "audit.max_bytes: must be 0 (no size rotation) or at least 4096, got -1"},
		{"audit:\n  max_age: 1s\n", "audit.max_age: must be 0 (no age rotation) or at least 1m, got 1s"},
		{"audit:\n  keep: -2\n", "audit.keep: must be 0 (keep all) or more, got -2"},
		{"audit:\n  replica_id: \"a/b\"\n", `audit.replica_id: "a/b" is not a replica ID`},
		{"audit:\n  replica_id: -x\n", `audit.replica_id: "-x" is not a replica ID`},
		{"audit:\n  ship:\n    queue: 0\n", "audit.ship.queue: must be 1 to 1048576, got 0"},
		{"audit:\n  ship:\n    syslog: http://x:1\n", `audit.ship.syslog: "http://x:1" is not udp://host:port`},
		{"audit:\n  ship:\n    syslog: udp://x\n", `audit.ship.syslog: "udp://x" is not udp://host:port`},
		{"audit:\n  ship:\n    syslog: unix://host/dev/log\n", `is not udp://host:port, tcp://host:port or unix:///path/to/socket`},
		{"audit:\n  ship:\n    otlp: http://collector.example:4318\n", `audit.ship.otlp: "http://collector.example:4318" sends audit lines in clear over the network: use https`},
		{"audit:\n  ship:\n    otlp: https://user:secret@collector.example\n", `audit.ship.otlp: "https://user:secret@collector.example" holds credentials: put them in OTEL_EXPORTER_OTLP_LOGS_HEADERS`},
		{"audit:\n  ship:\n    otlp: https://collector.example/v1/logs?key=secret\n", "must have no query nor fragment"},
		{"audit:\n  ship:\n    otlp: grpc://collector.example:4317\n", `audit.ship.otlp: "grpc://collector.example:4317" is not an OTLP/HTTP URL`},
		{"audit:\n  ship:\n    otlp: https:///v1/logs\n", "is not an OTLP/HTTP URL"},
		{"audit:\n  ship:\n    otlp: http://127.0.0.1:4318\n    spool_max_bytes: 1000\n", "audit.ship.spool_max_bytes: must be 1048576 (1 MiB) to 1099511627776 (1 TiB), got 1000"},
		{"audit:\n  anchor:\n    bucket: Bad_Bucket\n", `audit.anchor.bucket: "Bad_Bucket" is not an S3 bucket name`},
		{"audit:\n  anchor:\n    bucket: anchors\n", "audit.anchor.bucket: anchors go to the S3 server of artifacts.endpoint"},
		{"audit:\n  anchor:\n    bucket: anchors\n    every: 10ms\n", "audit.anchor.every: must be at least 1s, got 10ms"},
		{"audit:\n  anchor:\n    bucket: anchors\n    prefix: ../x\n", `audit.anchor.prefix: "../x" must not start with / nor hold ..`},
		{"audit:\n  checkpoint_every:\n    lines: 1\n", "audit.checkpoint_every.lines: must be 100 to 1000000 (a signature per batch of lines, never per call), got 1"},
		{"audit:\n  checkpoint_every:\n    lines: 0\n", "audit.checkpoint_every.lines: must be 100 to 1000000"},
		{"audit:\n  checkpoint_every:\n    interval: 10ms\n", "audit.checkpoint_every.interval: must be 1s to 24h0m0s, got 10ms"},
		{"audit:\n  checkpoint_every:\n    interval: 48h\n", "audit.checkpoint_every.interval: must be 1s to 24h0m0s, got 48h0m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.wantErr, func(t *testing.T) {
			isolate(t)
			writeFile(t, "file.yaml", tt.yaml)
			_, err := Load(Options{File: "file.yaml"})
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestAuditSyncFromEnvironment(t *testing.T) {
	isolate(t)
	t.Setenv("TOOLWARDEN_AUDIT_SYNC", "bogus")
	_, err := Load(Options{})
	require.ErrorContains(t, err, `audit.sync: "bogus" is not one of always, interval, none`)
}
