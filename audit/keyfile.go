package audit

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Key files are PEM: the private key PKCS#8 ("PRIVATE KEY"), the public
// key PKIX ("PUBLIC KEY"), as the standard library writes them and
// `openssl pkey` reads them, so that a third party checks a signature
// with tools of their own.

// The names `toolwarden audit keygen` writes.
const (
	PrivateKeyFile = "audit-signing.key"
	PublicKeyFile  = "audit-signing.pub"
)

// Keys are the public keys checkpoints are verified with, by key ID.
type Keys map[string]ed25519.PublicKey

// GenerateKeyFiles writes a new key pair into dir: PrivateKeyFile (mode
// 0600) and PublicKeyFile (0644). It never overwrites: an existing file
// of either name is an error, and nothing is written.
func GenerateKeyFiles(dir string) (keyPath, pubPath, id string, err error) {
	keyPath, pubPath = filepath.Join(dir, PrivateKeyFile), filepath.Join(dir, PublicKeyFile)
	for _, p := range []string{keyPath, pubPath} {
		if _, err := os.Lstat(p); err == nil {
			return "", "", "", fmt.Errorf("%s exists; keygen never overwrites a key (move it away, or use --out DIR)", p)
		}
	}
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", "", err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", "", "", err
	}
	if err := writeNew(keyPath, 0o600, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})); err != nil {
		return "", "", "", err
	}
	if err := writeNew(pubPath, 0o644, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})); err != nil {
		os.Remove(keyPath)
		return "", "", "", err
	}
	return keyPath, pubPath, KeyID(pub), nil
}

// writeNew creates path (failing if it exists), writes data, fsyncs it
// and sets mode (the umask may have narrowed it).
func writeNew(path string, mode fs.FileMode, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	err = errors.Join(err, f.Chmod(mode), f.Sync(), f.Close())
	if err != nil {
		os.Remove(path)
	}
	return err
}

// LoadSigningKey reads an Ed25519 private key in PKCS#8 PEM. The file
// must be a regular file that neither group nor others may read or write
// (mode 0600 or stricter): a key others can read signs for anyone.
func LoadSigningKey(path string) (*Signer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s is mode %04o: a signing key must be 0600 or stricter (chmod 600 %s)", path, perm, path)
	}
	data, err := readAllLimited(f, 64<<10)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("%s: not a PEM \"PRIVATE KEY\" (PKCS#8) block; `toolwarden audit keygen` writes one", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	key, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: a %T, not an Ed25519 key", path, k)
	}
	return NewSigner(key), nil
}

// LoadPublicKeys reads Ed25519 public keys in PKIX PEM ("PUBLIC KEY"),
// one a file; a file may hold several blocks.
func LoadPublicKeys(paths []string) (Keys, error) {
	keys := Keys{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		n := 0
		for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
			if block.Type != "PUBLIC KEY" {
				return nil, fmt.Errorf("%s: a PEM %q block, not \"PUBLIC KEY\" (give the .pub file, never the private key)", p, block.Type)
			}
			k, err := x509.ParsePKIXPublicKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			pub, ok := k.(ed25519.PublicKey)
			if !ok {
				return nil, fmt.Errorf("%s: a %T, not an Ed25519 key", p, k)
			}
			keys[KeyID(pub)] = pub
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("%s: no PEM \"PUBLIC KEY\" block in it", p)
		}
	}
	return keys, nil
}

// readAllLimited reads f, failing beyond limit bytes (a key is small).
func readAllLimited(f *os.File, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes, no key file", f.Name(), limit)
	}
	return data, nil
}
