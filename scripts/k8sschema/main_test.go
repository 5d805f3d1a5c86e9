package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestFileNameMatchesKubeconformTemplate(t *testing.T) {
	for _, c := range []struct {
		g    gvk
		want string
	}{
		{gvk{"", "v1", "Service"}, "service-v1-v1.json"},
		{gvk{"apps", "v1", "Deployment"}, "deployment-apps-v1.json"},
		{gvk{"networking.k8s.io", "v1", "NetworkPolicy"}, "networkpolicy-networking.k8s.io-v1.json"},
	} {
		if got := fileName(c.g); got != c.want {
			t.Errorf("fileName(%v) = %q, want %q", c.g, got, c.want)
		}
	}
}

func TestStrictRefusesUnknownPropertiesAndTakesIntOrString(t *testing.T) {
	in := map[string]any{
		"properties": map[string]any{
			"port":  map[string]any{"type": "string", "format": "int-or-string"},
			"inner": map[string]any{"properties": map[string]any{"a": map[string]any{"type": "string"}}},
			"free":  map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
		},
	}
	got := strict(in).(map[string]any)
	if got["additionalProperties"] != false {
		t.Errorf("top level: additionalProperties = %v, want false", got["additionalProperties"])
	}
	props := got["properties"].(map[string]any)
	if want := map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}; !reflect.DeepEqual(props["port"], want) {
		t.Errorf("int-or-string = %v, want %v", props["port"], want)
	}
	if props["inner"].(map[string]any)["additionalProperties"] != false {
		t.Error("a nested object with properties still takes others")
	}
	if _, ok := props["free"].(map[string]any)["additionalProperties"].(map[string]any); !ok {
		t.Error("an explicit additionalProperties was replaced")
	}
}

func TestFromSwaggerWritesEachKindWithItsReferences(t *testing.T) {
	dir := t.TempDir()
	doc := `{"definitions": {
	  "io.k8s.api.core.v1.Service": {"properties": {"spec": {"$ref": "#/definitions/io.k8s.api.core.v1.ServiceSpec"}},
	    "x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "Service"}]},
	  "io.k8s.api.core.v1.ServiceSpec": {"properties": {"type": {"type": "string"}}},
	  "io.k8s.api.core.v1.Unrelated": {"properties": {}}
	}}`
	swagger := filepath.Join(dir, "swagger.json")
	if err := os.WriteFile(swagger, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	n, err := run(swagger, nil, out)
	if err != nil || n != 1 {
		t.Fatalf("run = %d, %v; want 1 schema", n, err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "service-v1-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Ref         string                    `json:"$ref"`
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Ref != "#/definitions/io.k8s.api.core.v1.Service" {
		t.Errorf("$ref = %q", schema.Ref)
	}
	if _, ok := schema.Definitions["io.k8s.api.core.v1.ServiceSpec"]; !ok {
		t.Error("the referenced ServiceSpec is missing")
	}
	if _, ok := schema.Definitions["io.k8s.api.core.v1.Unrelated"]; ok {
		t.Error("an unreferenced definition was copied")
	}
}

func TestFromCRDRefusesOtherKinds(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "x.yaml")
	if err := os.WriteFile(f, []byte("kind: ConfigMap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := fromCRD(f, dir); err == nil {
		t.Fatal("a ConfigMap was taken for a CRD")
	}
}
