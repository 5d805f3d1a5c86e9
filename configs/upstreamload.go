package configs

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// UpstreamsDir is the directory beside the config file whose *.yaml files
// add more upstreams.
const UpstreamsDir = "upstreams.d"

// loadUpstreams validates the configured upstreams, appends those of
// upstreams.d/*.yaml beside the config file, and checks that every name is
// unique. Errors name the file and line when there is one, and the key.
func (l *Loaded) loadUpstreams() error {
	var errs []fieldError
	validateUpstreams(l.Config.Upstreams, func(key, format string, args ...any) {
		errs = append(errs, fieldError{key, fmt.Sprintf(format, args...)})
	})
	if err := l.report(errs); err != nil {
		return err
	}
	l.upstreamSrc = make([]string, len(l.Config.Upstreams))
	for i := range l.upstreamSrc {
		l.upstreamSrc[i] = l.Origin("upstreams")
	}
	if l.File == "" {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(l.File), UpstreamsDir, "*.yaml"))
	var lines []string
	for _, f := range files {
		ups, nodes, err := readUpstreamsFile(f)
		if err != nil {
			lines = append(lines, err.Error())
			continue
		}
		for i, u := range ups {
			validateUpstreams([]Upstream{u}, func(key, format string, args ...any) {
				key = fmt.Sprintf("upstreams[%d]", i) + strings.TrimPrefix(key, "upstreams[0]")
				lines = append(lines, fmt.Sprintf("%s:%d: %s: %s", f, nodes[i].Line, key, fmt.Sprintf(format, args...)))
			})
			l.upstreamSrc = append(l.upstreamSrc, fmt.Sprintf("%s:%d", f, nodes[i].Line))
		}
		l.Config.Upstreams = append(l.Config.Upstreams, ups...)
	}
	seen := map[string]string{}
	for i, u := range l.Config.Upstreams {
		if prev, dup := seen[u.Name]; dup && len(lines) == 0 {
			lines = append(lines, fmt.Sprintf("%s: upstreams[%d].name: %q is also the name of the upstream at %s", l.upstreamSrc[i], i, u.Name, prev))
		}
		seen[u.Name] = l.upstreamSrc[i]
	}
	if len(lines) > 0 {
		return joinLines(lines)
	}
	return nil
}

// upstreamSource says where upstream i was read.
func (l *Loaded) upstreamSource(i int) string {
	if i < len(l.upstreamSrc) {
		return l.upstreamSrc[i]
	}
	return "config"
}

// readUpstreamsFile reads an upstreams.d file: a list of upstreams, or a
// mapping whose only key is upstreams. Unknown keys and wrong types are
// refused as in the config file. Env keys are folded to lower case, as
// the config file's are.
func readUpstreamsFile(file string) ([]Upstream, []*yaml.Node, error) {
	root, err := readListFile(file, "upstreams")
	if err != nil || root == nil {
		return nil, nil, err
	}
	w := &keyWalker{file: file}
	for i, item := range root.Content {
		w.walk(item, reflect.TypeFor[Upstream](), fmt.Sprintf("upstreams[%d].", i))
	}
	if len(w.errs) > 0 {
		return nil, nil, joinLines(w.errs)
	}
	ups := make([]Upstream, len(root.Content))
	for i, item := range root.Content {
		if err := item.Decode(&ups[i]); err != nil {
			return nil, nil, fmt.Errorf("%s:%d: upstreams[%d]: %v", file, item.Line, i, err)
		}
		env := map[string]string{}
		for k, v := range ups[i].Env {
			env[strings.ToLower(k)] = v
		}
		ups[i].Env = env
	}
	return ups, root.Content, nil
}
