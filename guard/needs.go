package guard

import (
	"strings"

	"github.com/toolwarden/toolwarden/capability"
	"github.com/toolwarden/toolwarden/toolerr"
	"github.com/toolwarden/toolwarden/workspacepath"
)

// Needs returns the capabilities one call needs: the tool's declared ones,
// with templates filled from the arguments. A scope "{arg}" becomes the
// argument's value, one need per element when it is a list; "{arg}/**"
// becomes the subtree under it (tools that walk a directory). Path
// arguments are cleaned first (an absent one is the workspace root, "."),
// so a need never holds "..", "//" or a trailing slash.
func Needs(tool *ToolInfo, args any) ([]capability.Capability, *toolerr.Error) {
	m, _ := args.(map[string]any)
	var out []capability.Capability
	for _, s := range tool.Capabilities {
		parts := strings.SplitN(s, ":", 3)
		if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
			return nil, toolerr.New(toolerr.Internal, "This is a server fault; report it to the operator.",
				"tool %q declares a bad capability %q", tool.Name, s).WithRule("capabilities.declared")
		}
		c := capability.Capability{Resource: parts[0], Verb: parts[1], Scope: parts[2]}
		name, subtree, ok := template(c.Scope)
		if !ok {
			out = append(out, c)
			continue
		}
		values, terr := templateValues(tool, name, m[name], c.Resource == "fs")
		if terr != nil {
			return nil, terr
		}
		for _, v := range values {
			if subtree {
				v = subtreeOf(v)
			}
			out = append(out, capability.Capability{Resource: c.Resource, Verb: c.Verb, Scope: v})
		}
	}
	return out, nil
}

// template splits "{name}" or "{name}/**".
func template(scope string) (name string, subtree, ok bool) {
	scope, subtree = strings.CutSuffix(scope, "/**")
	if len(scope) < 3 || scope[0] != '{' || scope[len(scope)-1] != '}' {
		return "", false, false
	}
	return scope[1 : len(scope)-1], subtree, true
}

func subtreeOf(p string) string {
	if p == "." {
		return "**"
	}
	return p + "/**"
}

// templateValues returns the values of argument name. A path argument,
// or any value that fills an fs scope (fsScope: a declared tool may fill
// one from a plain string param), is cleaned as a workspace path, so that
// "docs/../secrets" needs secrets and no lexical trick passes a deny.
func templateValues(tool *ToolInfo, name string, val any, fsScope bool) ([]string, *toolerr.Error) {
	isPath := false
	for _, p := range tool.PathArgs {
		isPath = isPath || p == name
	}
	var raw []any
	switch x := val.(type) {
	case nil:
		if isPath {
			return []string{"."}, nil
		}
	case string:
		raw = []any{x}
	case []any:
		raw = x
	}
	if raw == nil {
		return nil, templateError(tool, name, "is missing or not a string")
	}
	out := make([]string, 0, len(raw))
	for _, item := range raw {
		s, ok := item.(string)
		if !ok || s == "" {
			return nil, templateError(tool, name, "holds an empty or non-string value")
		}
		if isPath || fsScope {
			clean, err := workspacepath.Clean(s)
			if err != nil {
				te := toolerr.As(err)
				return nil, toolerr.New(te.Code, te.Hint, "argument %q: %s", name, te.Message).WithRule(te.Rule)
			}
			s = clean
		}
		out = append(out, s)
	}
	return out, nil
}

func templateError(tool *ToolInfo, name, what string) *toolerr.Error {
	return toolerr.New(toolerr.InvalidSchema, schemaHint,
		"argument %q of %s %s, so the capability it needs cannot be checked", name, tool.Name, what).WithRule("capabilities.argument")
}
