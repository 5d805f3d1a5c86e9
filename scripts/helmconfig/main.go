// Command helmconfig prints the toolwarden configuration a rendered Helm
// chart carries: the config.yaml of the ConfigMap in the manifests read
// from standard input (the output of helm template), so that
// scripts/helm-check can hand it to `toolwarden config check`.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"
)

func main() {
	cfg, err := configOf(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helmconfig:", err)
		os.Exit(1)
	}
	fmt.Print(cfg)
}

func configOf(r io.Reader) (string, error) {
	dec := yaml.NewDecoder(r)
	for {
		var doc struct {
			Kind string            `yaml:"kind"`
			Data map[string]string `yaml:"data"`
		}
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return "", errors.New("no ConfigMap with a config.yaml in the manifests")
		}
		if err != nil {
			return "", err
		}
		if cfg, ok := doc.Data["config.yaml"]; doc.Kind == "ConfigMap" && ok {
			return cfg, nil
		}
	}
}
