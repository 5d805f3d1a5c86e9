package configs

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// checkFile strictly decodes a config file: YAML syntax, unknown keys and
// value types, each error with the file, line and key. It returns the keys
// the file sets.
func checkFile(file string, data []byte) ([]string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	w := &keyWalker{file: file}
	w.walk(doc.Content[0], reflect.TypeFor[Config](), "")
	if len(w.errs) > 0 {
		return nil, joinLines(w.errs)
	}
	var cfg Config
	if err := doc.Content[0].Decode(&cfg); err != nil {
		return nil, fmt.Errorf("%s: %s", file, strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n  "))
	}
	return w.keys, nil
}

type keyWalker struct {
	file string
	keys []string
	errs []string
}

func (w *keyWalker) walk(n *yaml.Node, t reflect.Type, prefix string) {
	if n.Kind != yaml.MappingNode {
		w.errs = append(w.errs, fmt.Sprintf("%s:%d: %s: must be a mapping of keys", w.file, n.Line, keyOrRoot(prefix)))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := prefix + k.Value
		field, ok := fieldByTag(t, k.Value)
		if !ok {
			w.errs = append(w.errs, fmt.Sprintf("%s:%d: %s: unknown key (known here: %s)",
				w.file, k.Line, key, strings.Join(tagsOf(t), ", ")))
			continue
		}
		if field.Type.Kind() == reflect.Struct && field.Type.String() != "time.Duration" {
			w.walk(val, field.Type, key+".")
			continue
		}
		w.keys = append(w.keys, key)
		if field.Type.Kind() == reflect.Slice && field.Type.Elem().Kind() == reflect.Struct && val.Kind == yaml.SequenceNode {
			for j, item := range val.Content {
				w.walk(item, field.Type.Elem(), fmt.Sprintf("%s[%d].", key, j))
			}
			continue
		}
		w.checkValue(val, field.Type, key)
	}
}

// checkValue decodes a value into its field's type, so that a wrong type is
// reported with its line and key.
func (w *keyWalker) checkValue(val *yaml.Node, t reflect.Type, key string) {
	err := val.Decode(reflect.New(t).Interface())
	if err == nil {
		return
	}
	reason := err.Error()
	if t == reflect.TypeFor[time.Duration]() {
		reason = fmt.Sprintf("%q is not a duration (write e.g. 30s, 5m or 1h)", val.Value)
	} else if i := strings.LastIndex(reason, ": "); i >= 0 {
		reason = reason[i+2:] // drop yaml's "unmarshal errors: line N" prefix
	}
	w.errs = append(w.errs, fmt.Sprintf("%s:%d: %s: %s", w.file, val.Line, key, reason))
}

// fieldByTag and tagsOf know a struct's YAML keys; a field tagged "-" is
// not one (Config.File is set by Load, never read from a file).
func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		if tag := t.Field(i).Tag.Get("yaml"); tag == name && tag != "-" {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

func tagsOf(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if tag := t.Field(i).Tag.Get("yaml"); tag != "-" {
			out = append(out, tag)
		}
	}
	return out
}

// LineOf returns the line of key in a YAML document, or 0.
func lineOf(data []byte, key string) int {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	n := doc.Content[0]
	line := 0
	for _, part := range strings.Split(key, ".") {
		next := (*yaml.Node)(nil)
		for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == part {
				line, next = n.Content[i].Line, n.Content[i+1]
			}
		}
		if next == nil {
			return 0
		}
		n = next
	}
	return line
}

func keyOrRoot(prefix string) string {
	if prefix == "" {
		return "(top level)"
	}
	return strings.TrimSuffix(prefix, ".")
}

func joinLines(lines []string) error {
	return fmt.Errorf("%s", strings.Join(lines, "\n"))
}
