package jsonrpcstrict

import (
	"strings"
	"testing"
)

// BenchmarkCheck is the cost the pre-check adds to each message, for a
// typical tools/call and for a larger one (a 4 KiB write with 20 fields).
func BenchmarkCheck(b *testing.B) {
	var fields []string
	for i := range 20 {
		fields = append(fields, `"field`+string(rune('a'+i))+`":"value"`)
	}
	big := `{"jsonrpc":"2.0","id":"req-42","method":"tools/call","params":{"name":"write_file","arguments":{"path":"a/b.txt","content":"` +
		strings.Repeat("x", 4096) + `",` + strings.Join(fields, ",") + `},"_meta":{"progressToken":5}}}`
	for _, bc := range []struct{ name, msg string }{{"tools_call", call}, {"tools_call_4KiB", big}} {
		b.Run(bc.name, func(b *testing.B) {
			msg := []byte(bc.msg)
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Check(msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
