package configs

import (
	"slices"
	"time"
)

// AuditSyncModes are the values of audit.sync.
var AuditSyncModes = []string{"always", "interval", "none"}

// minAuditBytes keeps audit.max_bytes above a few lines, so that a typo
// (a size in KiB) does not rotate at every call.
const minAuditBytes = 4096

func (a Audit) validate(add func(string, string, ...any)) {
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
}
