package pin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-json-experiment/json/jsontext"
)

// maxFileBytes bounds a pins file read: it holds definitions, each
// already bounded by what toolwarden offers.
const maxFileBytes = 64 << 20

// Marshal encodes f deterministically: RFC 8785 member order and number
// and string forms, indented two spaces so that a change reads as a
// small diff in review, and a final newline. The same pins always give
// the same bytes.
func Marshal(f File) ([]byte, error) {
	f.Version = FormatVersion
	if f.Upstreams == nil {
		f.Upstreams = map[string]Upstream{}
	}
	raw, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	v := jsontext.Value(raw)
	if err := v.Canonicalize(); err != nil {
		return nil, err
	}
	if err := v.Indent(jsontext.WithIndent("  ")); err != nil {
		return nil, err
	}
	return append(v, '\n'), nil
}

// Write writes f to path atomically (a temporary file beside it, synced,
// then renamed over it), mode 0644: a reader sees the old pins or the
// new ones, never half.
func Write(path string, f File) error {
	data, err := Marshal(f)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is left to remove
	if _, err = tmp.Write(data); err == nil {
		if err = tmp.Chmod(0o644); err == nil {
			err = tmp.Sync()
		}
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Read reads a pins file. Unknown members, another format version, and a
// digest that does not match its definition are refused, each naming
// where.
func Read(path string) (File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return File{}, err
	}
	return Parse(path, data)
}

// Parse is Read over data; name says where it came from.
func Parse(name string, data []byte) (File, error) {
	if len(data) > maxFileBytes {
		return File{}, fmt.Errorf("%s: over %d bytes", name, maxFileBytes)
	}
	if _, err := Canonical(data); err != nil {
		return File{}, fmt.Errorf("%s: %w", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return File{}, fmt.Errorf("%s: %w", name, err)
	}
	if f.Version != FormatVersion {
		return File{}, fmt.Errorf("%s: version: %d is not %d; run toolwarden pin again", name, f.Version, FormatVersion)
	}
	for up, u := range f.Upstreams {
		if err := checkDigests(name+": upstreams."+up+".tools", u.Tools, u.Server, Digest); err != nil {
			return File{}, err
		}
		if err := checkDigests(name+": upstreams."+up+".prompts", u.Prompts, u.Server, PromptDigest); err != nil {
			return File{}, err
		}
	}
	return f, nil
}

// checkDigests canonicalises each definition of defs (at where) and
// checks its digest, by digest.
func checkDigests(where string, defs map[string]Tool, server Server, digest func(Server, jsontext.Value) string) error {
	for item, t := range defs {
		def, err := Canonical(t.Definition)
		if err != nil {
			return fmt.Errorf("%s.%s.definition: %w", where, item, err)
		}
		if digest(server, def) != t.Digest {
			return fmt.Errorf("%s.%s.digest: %w", where, item, ErrTampered)
		}
		t.Definition = def
		defs[item] = t
	}
	return nil
}
