package configs

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/toolwarden/toolwarden/internal/lazyregexp"
)

// ToolsDir is the directory beside the config file whose *.yaml files
// declare more tools.
const ToolsDir = "tools.d"

// toolSource is where one declared tool was read, for error messages.
type toolSource struct {
	file  string     // "" when it came from no file
	index int        // its index in that file's list
	node  *yaml.Node // its entry, for line numbers; nil without a file
}

func (s toolSource) String() string {
	if s.file == "" {
		return "config"
	}
	if s.node != nil {
		return fmt.Sprintf("%s:%d", s.file, s.node.Line)
	}
	return s.file
}

// loadDeclared appends the tools of tools.d/*.yaml beside the config file
// to the configured ones and validates them all with check, reporting each
// problem as "file:line: tools[i].key: reason". Without a check, declared
// tools are refused: an unchecked tool must never reach the server.
func (l *Loaded) loadDeclared(check ToolChecker) error {
	l.declared = mainFileTools(l.File, len(l.Config.Tools))
	if l.File != "" {
		files, _ := filepath.Glob(filepath.Join(filepath.Dir(l.File), ToolsDir, "*.yaml"))
		var errs []string
		for _, f := range files {
			ts, srcs, err := readToolsFile(f)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			l.Config.Tools = append(l.Config.Tools, ts...)
			l.declared = append(l.declared, srcs...)
		}
		if len(errs) > 0 {
			return joinLines(errs)
		}
	}
	if check == nil && len(l.Config.Tools) > 0 {
		return fmt.Errorf("%s: tools: declared tools cannot be checked here: the loader has no ToolChecker (a bug: pass declared.Check)", l.declared[0])
	}
	var errs []string
	seen := map[string]toolSource{}
	for i := range l.Config.Tools {
		t, src := &l.Config.Tools[i], l.declared[i]
		add := func(key, format string, args ...any) {
			errs = append(errs, fmt.Sprintf("%s: tools[%d].%s: %s", src.at(key), src.index, key, fmt.Sprintf(format, args...)))
		}
		if prev, dup := seen[t.Name]; dup && t.Name != "" {
			add("name", "%q is also declared at %s", t.Name, prev)
		}
		seen[t.Name] = src
		if t.Type != ToolCLI && t.Network.Enabled() {
			add("network", "applies only to cli tools (an http tool reaches its base_url only)")
		}
		t.Network.validate("network", add)
		if t.usesVault() && l.Config.Secrets.Vault.Address == "" {
			add("api_key_vault", "a *_vault key needs secrets.vault.address")
		}
		check(t, add)
	}
	if len(errs) > 0 {
		return joinLines(errs)
	}
	return nil
}

// at is "file:line" of key within the tool's entry.
func (s toolSource) at(key string) string {
	if s.node == nil {
		return s.String()
	}
	if n := lineIn(s.node, key); n > 0 {
		return fmt.Sprintf("%s:%d", s.file, n)
	}
	return s.String()
}

// mainFileTools returns the sources of the n tools of the config file.
func mainFileTools(file string, n int) []toolSource {
	srcs := make([]toolSource, n)
	var items []*yaml.Node
	if data, err := os.ReadFile(file); err == nil && file != "" {
		var doc yaml.Node
		if yaml.Unmarshal(data, &doc) == nil && len(doc.Content) > 0 {
			if seq := valueOf(doc.Content[0], "tools"); seq != nil && seq.Kind == yaml.SequenceNode {
				items = seq.Content
			}
		}
	}
	for i := range srcs {
		srcs[i] = toolSource{file: file, index: i}
		if i < len(items) {
			srcs[i].node = items[i]
		}
	}
	return srcs
}

// readToolsFile reads a tools.d file: a list of tools, or a mapping whose
// only key is tools. Unknown keys and wrong types are refused as in the
// config file.
func readToolsFile(file string) ([]DeclaredTool, []toolSource, error) {
	root, err := readListFile(file, "tools")
	if err != nil || root == nil {
		return nil, nil, err
	}
	w := &keyWalker{file: file}
	for i, item := range root.Content {
		w.walk(item, reflect.TypeFor[DeclaredTool](), fmt.Sprintf("tools[%d].", i))
	}
	if len(w.errs) > 0 {
		return nil, nil, joinLines(w.errs)
	}
	tools := make([]DeclaredTool, len(root.Content))
	srcs := make([]toolSource, len(root.Content))
	for i, item := range root.Content {
		if err := item.Decode(&tools[i]); err != nil {
			return nil, nil, fmt.Errorf("%s:%d: tools[%d]: %v", file, item.Line, i, err)
		}
		srcs[i] = toolSource{file: file, index: i, node: item}
	}
	return tools, srcs, nil
}

// keySegment is one step of a key such as params[0].pattern.
var keySegment = lazyregexp.New(`^([a-z_]*)((?:\[\d+\])*)$`)

// lineIn returns the line of a key such as "params[1].pattern" inside a
// YAML node, or 0.
func lineIn(n *yaml.Node, key string) int {
	line := 0
	for _, seg := range strings.Split(key, ".") {
		m := keySegment.FindStringSubmatch(seg)
		if m == nil || n == nil {
			return line
		}
		if m[1] != "" {
			k := keyNode(n, m[1])
			if k == nil {
				return line
			}
			line, n = k.Line, valueOf(n, m[1])
		}
		for _, idx := range strings.FieldsFunc(m[2], func(r rune) bool { return r == '[' || r == ']' }) {
			i, _ := strconv.Atoi(idx)
			if n.Kind != yaml.SequenceNode || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		}
	}
	return line
}

func keyNode(n *yaml.Node, key string) *yaml.Node {
	for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return nil
}

func valueOf(n *yaml.Node, key string) *yaml.Node {
	for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// declaredWidenings lists every declared tool: each one is a widening.
func declaredWidenings(l *Loaded) []string {
	var out []string
	for i, t := range l.Config.Tools {
		src := "config"
		if i < len(l.declared) {
			src = l.declared[i].String()
		}
		what := ""
		switch t.Type {
		case ToolCLI:
			what = fmt.Sprintf("runs %q in the sandbox", t.Command)
		case ToolHTTP:
			what = fmt.Sprintf("sends %s requests to %s", t.Method, t.BaseURL)
		}
		out = append(out, fmt.Sprintf("tools declares %s tool %q: %s (from %s)", t.Type, t.Name, what, src))
		if !t.ApprovalRequired() {
			out = append(out, fmt.Sprintf("tools %q runs without human approval (requires_approval: false)", t.Name))
		}
		for _, p := range t.Params {
			if p.AllowFlagLike {
				out = append(out, fmt.Sprintf("tools %q param %q accepts values that look like flags", t.Name, p.Name))
			}
		}
		out = append(out, networkWidenings(fmt.Sprintf("tools[%d].network", i), src, t.Network)...)
	}
	return out
}

// readListFile reads a YAML file that is a list, or a mapping whose only
// key is key holding the list; nil for an empty file.
func readListFile(file, key string) (*yaml.Node, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.MappingNode && len(root.Content) == 2 && root.Content[0].Value == key {
		root = root.Content[1]
	}
	if root.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s:%d: must be a list of %s, or a mapping whose only key is %s", file, root.Line, key, key)
	}
	return root, nil
}

// usesVault reports whether the tool reads a secret from Vault.
func (t DeclaredTool) usesVault() bool {
	if t.APIKeyVault != "" {
		return true
	}
	return slices.ContainsFunc(t.HeaderEnv, func(h HeaderEnv) bool { return h.Vault != "" })
}
