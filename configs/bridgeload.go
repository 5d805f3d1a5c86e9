package configs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"
)

// LoadBridge reads the bridge: section (and the secrets: section its
// API key may need) of file, for `toolwarden gemini --bridge-config`
// when it drives another server (--server-cmd, --server-url): prices,
// budget and API key, validated as Load validates them. Any other
// section is refused, as it would configure a server that is not the
// one driven.
func LoadBridge(file string) (Bridge, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return Bridge{}, fmt.Errorf("--bridge-config: %w", err)
	}
	var top map[string]any
	if err := yaml.Unmarshal(data, &top); err != nil {
		return Bridge{}, fmt.Errorf("%s: %w", file, err)
	}
	for k := range top {
		if k != "bridge" && k != "secrets" {
			return Bridge{}, fmt.Errorf("%s: %s: --bridge-config reads only the bridge: and secrets: sections; configure the server you drive in its own config", file, k)
		}
	}
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return Bridge{}, fmt.Errorf("%s: %w", file, err)
	}
	c.bindSecrets()
	var lines []string
	add := func(key, format string, args ...any) {
		src := file
		if n := lineOf(data, key); n > 0 {
			src = fmt.Sprintf("%s:%d", file, n)
		}
		lines = append(lines, fmt.Sprintf("%s: %s: %s", src, key, fmt.Sprintf(format, args...)))
	}
	c.Bridge.validate(add)
	c.validateSecrets(add)
	if len(lines) > 0 {
		return Bridge{}, joinLines(lines)
	}
	return c.Bridge, nil
}
