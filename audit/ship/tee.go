package ship

import "github.com/toolwarden/toolwarden/audit"

// Tee ships each line to every shipper it holds (syslog and OTLP both).
type Tee []audit.Shipper

// Ship hands line to each shipper in turn; none of them blocks.
func (t Tee) Ship(line []byte, seq uint64, hash string) {
	for _, s := range t {
		s.Ship(line, seq, hash)
	}
}
