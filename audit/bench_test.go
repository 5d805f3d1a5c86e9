package audit

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

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

// BenchmarkAuditAppendSigning measures appends with checkpoint signing
// off and on (a checkpoint every 1000 lines, the default), in one run:
// ns/op is the mean, p50-ns and p99-ns the percentiles of single appends
// (sync interval). A signature is paid by one append in 1000, so p99
// must not move beyond noise.
func BenchmarkAuditAppendSigning(b *testing.B) {
	e := Entry{Session: "s", Tool: "read_file", ArgsSHA256: "abababababababababababababababababababababababababababababababab",
		Rule: "allowed", Outcome: "allowed", DurationMS: 0.25}
	s, _ := newTestSigner(b)
	for _, tc := range []struct {
		name   string
		signer *Signer
	}{{"off", nil}, {"on", s}} {
		b.Run(tc.name, func(b *testing.B) {
			a, err := OpenWith(filepath.Join(b.TempDir(), "audit.jsonl"), Options{Signer: tc.signer, CheckpointLines: 1000})
			require.NoError(b, err)
			b.Cleanup(func() { a.Close() })
			took := make([]time.Duration, 0, 1<<16)
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				if err := a.Append(e); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(t0))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
			b.ReportMetric(float64(took[len(took)*999/1000].Nanoseconds()), "p99.9-ns")
		})
	}
}

// BenchmarkCheckpointSign is the cost of one checkpoint's signature.
func BenchmarkCheckpointSign(b *testing.B) {
	s, _ := newTestSigner(b)
	e := Entry{Seq: 1000, Prev: genesis, Time: "2026-01-02T03:04:05.123456789Z", Replica: "r1", Rule: CheckpointLines}
	for b.Loop() {
		s.sign(&e)
	}
}
