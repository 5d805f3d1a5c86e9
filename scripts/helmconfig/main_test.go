package main

import (
	"strings"
	"testing"
)

func TestConfigOfFindsTheConfigMap(t *testing.T) {
	manifests := `---
kind: Service
metadata: {name: x}
---
kind: ConfigMap
data:
  other: y
---
kind: ConfigMap
data:
  config.yaml: |
    workspace: /workspace
`
	got, err := configOf(strings.NewReader(manifests))
	if err != nil || got != "workspace: /workspace\n" {
		t.Fatalf("configOf = %q, %v", got, err)
	}
	if _, err := configOf(strings.NewReader("kind: Service\n")); err == nil {
		t.Fatal("no error without a ConfigMap")
	}
}
