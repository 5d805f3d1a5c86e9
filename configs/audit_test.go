package configs

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAuditDefaults(t *testing.T) {
	isolate(t)
	l, err := Load(Options{})
	require.NoError(t, err)
	require.Equal(t, Audit{Sync: "interval", MaxBytes: 64 << 20}, l.Config.Audit)
}

func TestAuditSettings(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", "audit:\n  sync: always\n  max_bytes: 1048576\n  max_age: 24h\n  keep: 5\n")
	l, err := Load(Options{File: "file.yaml"})
	require.NoError(t, err)
	require.Equal(t, Audit{Sync: "always", MaxBytes: 1 << 20, MaxAge: 24 * time.Hour, Keep: 5}, l.Config.Audit)
}

func TestAuditRejectsBadValues(t *testing.T) {
	tests := []struct{ yaml, wantErr string }{
		{"audit:\n  sync: sometimes\n", `file.yaml:2: audit.sync: "sometimes" is not one of always, interval, none`},
		{"audit:\n  sync: \"\"\n", `audit.sync: "" is not one of always, interval, none`},
		{"audit:\n  max_bytes: 100\n", "audit.max_bytes: must be 0 (no size rotation) or at least 4096, got 100"},
		{"audit:\n  max_bytes: -1\n", "audit.max_bytes: must be 0 (no size rotation) or at least 4096, got -1"},
		{"audit:\n  max_age: 1s\n", "audit.max_age: must be 0 (no age rotation) or at least 1m, got 1s"},
		{"audit:\n  keep: -2\n", "audit.keep: must be 0 (keep all) or more, got -2"},
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
