package audit

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkAuditAppend measures one audit line per sync mode, written by
// one goroutine and by many (parallel: with always, concurrent appends
// share fsyncs). The figures depend on the disk under the temp directory.
func BenchmarkAuditAppend(b *testing.B) {
	e := Entry{Session: "s", Tool: "read_file", ArgsSHA256: "abababababababababababababababababababababababababababababababab",
		Rule: "allowed", Outcome: "allowed", DurationMS: 0.25}
	for _, mode := range []SyncMode{SyncNone, SyncInterval, SyncAlways} {
		open := func(b *testing.B) *Log {
			a, err := OpenWith(filepath.Join(b.TempDir(), "audit.jsonl"), Options{Sync: mode})
			require.NoError(b, err)
			b.Cleanup(func() { a.Close() })
			return a
		}
		b.Run(string(mode), func(b *testing.B) {
			a := open(b)
			b.ReportAllocs()
			for b.Loop() {
				if err := a.Append(e); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(string(mode)+"/parallel", func(b *testing.B) {
			a := open(b)
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := a.Append(e); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkAuditRotate measures appends with rotation every 64 KiB
// (about 170 lines), fsynced at each rotation.
func BenchmarkAuditRotate(b *testing.B) {
	a, err := OpenWith(filepath.Join(b.TempDir(), "audit.jsonl"), Options{MaxBytes: 64 << 10, Keep: 3})
	require.NoError(b, err)
	b.Cleanup(func() { a.Close() })
	e := Entry{Session: "s", Tool: "read_file", ArgsSHA256: "abababababababababababababababababababababababababababababababab",
		Rule: "allowed", Outcome: "allowed", DurationMS: 0.25}
	b.ReportAllocs()
	for b.Loop() {
		if err := a.Append(e); err != nil {
			b.Fatal(err)
		}
	}
}
