package ship

import (
	"fmt"
	"io"

	"github.com/toolwarden/toolwarden/audit"
)

// Keygen writes a new checkpoint signing key pair into dir (audit
// keygen) and says where, and what to do with each file.
func Keygen(w io.Writer, dir string) error {
	keyPath, pubPath, id, err := audit.GenerateKeyFiles(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s (private, mode 0600): set audit.signing_key_file to it; it never leaves this host\n", keyPath)
	fmt.Fprintf(w, "wrote %s (public, mode 0644): give it to whoever verifies (toolwarden audit verify --pubkey %s)\n", pubPath, pubPath)
	fmt.Fprintf(w, "key id %s\n", id)
	return nil
}
