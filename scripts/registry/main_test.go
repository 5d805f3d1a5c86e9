package main

import (
	"encoding/json"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServerJSON: the repository's server.json is valid against the MCP
// Registry's schema and carries the version of the newest release
// CHANGELOG.md names: its newest "## [X.Y.Z]" heading, or, before the
// first release, the version the Unreleased section announces for it.
// (scripts/release compares it with the version goreleaser stamps, on a
// tagged commit.)
func TestServerJSON(t *testing.T) {
	raw, err := os.ReadFile("../../server.json")
	require.NoError(t, err)
	changelog, err := os.ReadFile("../../CHANGELOG.md")
	require.NoError(t, err)
	want := changelogVersion(t, string(changelog))
	require.NoError(t, Check(raw, want))
}

func changelogVersion(t *testing.T, changelog string) string {
	t.Helper()
	if m := regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\]`).FindStringSubmatch(changelog); m != nil {
		return m[1]
	}
	m := regexp.MustCompile(`The first release, (\d+\.\d+\.\d+)`).FindStringSubmatch(changelog)
	require.NotNil(t, m, "CHANGELOG.md names no release version")
	return m[1]
}

// TestServerJSONRefusals: entries the registry or the release would
// refuse, each with an error naming what is wrong.
func TestServerJSONRefusals(t *testing.T) {
	raw, err := os.ReadFile("../../server.json")
	require.NoError(t, err)
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		require.NoError(t, json.Unmarshal(raw, &m))
		f(m)
		out, err := json.Marshal(m)
		require.NoError(t, err)
		return out
	}
	pkg := func(m map[string]any) map[string]any { return m["packages"].([]any)[0].(map[string]any) }
	long := make([]byte, 101)
	for i := range long {
		long[i] = 'a'
	}
	for _, tc := range []struct {
		name, version, want string
		body                []byte
	}{
		{"not JSON", "", "not JSON", []byte(`{"name":`)},
		{"name without namespace", "", "does not match the registry's schema", edit(func(m map[string]any) { m["name"] = "toolwarden" })},
		{"name with a shell metacharacter", "", "does not match the registry's schema", edit(func(m map[string]any) { m["name"] = "io.github.x/a;rm -rf" })},
		{"description over 100 characters", "", "does not match the registry's schema", edit(func(m map[string]any) { m["description"] = string(long) })},
		{"no version", "", "does not match the registry's schema", edit(func(m map[string]any) { delete(m, "version") })},
		{"repository URL not a URI", "", "does not match the registry's schema", edit(func(m map[string]any) { m["repository"].(map[string]any)["url"] = "::not a uri" })},
		{"package without transport", "", "does not match the registry's schema", edit(func(m map[string]any) { delete(pkg(m), "transport") })},
		{"unknown package type", "", `registryType "homebrew" is not one the registry knows`, edit(func(m map[string]any) { pkg(m)["registryType"] = "homebrew" })},
		{"image of another repository", "", "the image the release pushes", edit(func(m map[string]any) { pkg(m)["identifier"] = "docker.io/evil/toolwarden:0.1.0" })},
		{"image tag not the version", "", "the image the release pushes", edit(func(m map[string]any) { pkg(m)["identifier"] = "ghcr.io/toolwarden/toolwarden:latest" })},
		{"no image", "", "no oci package", edit(func(m map[string]any) { m["packages"] = []any{} })},
		{"another schema version", "", "$schema is", edit(func(m map[string]any) {
			m["$schema"] = "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json"
		})},
		{"version not the release's", "9.9.9", `but the release is "9.9.9"`, raw},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.body, tc.version)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}
