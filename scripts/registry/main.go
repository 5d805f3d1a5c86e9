// Command registry checks server.json, toolwarden's entry for the MCP
// Registry, against the registry's published schema (server.schema.json
// beside it, vendored byte for byte: NOTICE) and against what a release
// ships: an OCI package of ghcr.io/toolwarden/toolwarden tagged with the
// entry's version, and, with -version, that version being the one the
// release stamps. scripts/release runs it; its test runs it on the
// repository's server.json in the normal suite.
//
// Usage: registry [-server server.json] [-version X.Y.Z]
package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaJSON is the registry's server.json schema (NOTICE says whence).
//
//go:embed server.schema.json
var schemaJSON []byte

// schemaURL is the published version of the vendored schema; server.json
// names it as its $schema.
const schemaURL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

// imageRepository is where the release pushes the image (docs/release.md).
const imageRepository = "ghcr.io/toolwarden/toolwarden"

func main() {
	path := flag.String("server", "server.json", "the server.json to check")
	version := flag.String("version", "", "the version the release stamps; server.json must carry it")
	flag.Parse()
	raw, err := os.ReadFile(*path)
	if err == nil {
		err = Check(raw, *version)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "registry: %s: %v\n", *path, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "registry: %s is valid against the MCP Registry's schema (%s)\n", *path, schemaURL)
}

// entry is what Check reads of server.json beyond the schema.
type entry struct {
	Schema   string `json:"$schema"`
	Version  string `json:"version"`
	Packages []struct {
		RegistryType string `json:"registryType"`
		Identifier   string `json:"identifier"`
	} `json:"packages"`
}

// Check validates server.json's bytes against the registry's schema and
// the release's rules; want, when set, is the version it must carry.
func Check(raw []byte, want string) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	schema, types, err := compile()
	if err != nil {
		return err
	}
	if err := schema.Validate(doc); err != nil {
		return fmt.Errorf("does not match the registry's schema: %w", err)
	}
	var e entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return err
	}
	if e.Schema != schemaURL {
		return fmt.Errorf("$schema is %q, want %q (the vendored schema's version)", e.Schema, schemaURL)
	}
	if want != "" && e.Version != want {
		return fmt.Errorf("version is %q, but the release is %q", e.Version, want)
	}
	image := false
	for _, p := range e.Packages {
		if !slices.Contains(types, p.RegistryType) {
			return fmt.Errorf("package %q: registryType %q is not one the registry knows (%s)", p.Identifier, p.RegistryType, strings.Join(types, ", "))
		}
		if p.RegistryType != "oci" {
			continue
		}
		if p.Identifier != imageRepository+":"+e.Version {
			return fmt.Errorf("oci package %q: want %s:%s, the image the release pushes for this version", p.Identifier, imageRepository, e.Version)
		}
		image = true
	}
	if !image {
		return errors.New("no oci package: the release ships " + imageRepository)
	}
	return nil
}

// compile compiles the vendored schema, with formats asserted, and returns
// it with the package types it lists (registryType's examples: the schema
// names them there, not in an enum).
func compile() (*jsonschema.Schema, []string, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, nil, err
	}
	schema, err := c.Compile(schemaURL)
	if err != nil {
		return nil, nil, err
	}
	var s struct {
		Definitions struct {
			Package struct {
				Properties struct {
					RegistryType struct {
						Examples []string `json:"examples"`
					} `json:"registryType"`
				} `json:"properties"`
			} `json:"Package"`
		} `json:"definitions"`
	}
	if err := json.Unmarshal(schemaJSON, &s); err != nil {
		return nil, nil, err
	}
	types := s.Definitions.Package.Properties.RegistryType.Examples
	if len(types) == 0 {
		return nil, nil, errors.New("the vendored schema lists no package types")
	}
	return schema, types, nil
}
