package guard

import (
	"slices"
	"strings"

	"github.com/toolwarden/toolwarden/internal/capability"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/internal/workspacepath"
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
		resource, rest, ok1 := strings.Cut(s, ":")
		verb, scope, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 || resource == "" || verb == "" || scope == "" {
			return nil, toolerr.New(toolerr.Internal, "This is a server fault; report it to the operator.",
				"tool %q declares a bad capability %q", tool.Name, s).WithRule("capabilities.declared")
		}
		c := capability.Capability{Resource: resource, Verb: verb, Scope: scope}
		name, subtree, ok := template(c.Scope)
		if !ok {
			out = append(out, c)
			continue
		}
		var terr *toolerr.Error
		if out, terr = appendFilled(out, tool, c, name, subtree, m[name]); terr != nil {
			return nil, terr
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

// appendFilled appends to out the needs of c, whose scope is the
// template of argument name, with that argument's value val: one need
// per value (per element of a list), its subtree when subtree is set.
func appendFilled(out []capability.Capability, tool *ToolInfo, c capability.Capability, name string, subtree bool, val any) ([]capability.Capability, *toolerr.Error) {
	isPath := slices.Contains(tool.PathArgs, name)
	switch x := val.(type) {
	case nil:
		if isPath {
			return append(out, filled(c, ".", subtree)), nil
		}
	case string:
		v, err := templateValue(tool, name, x, isPath || c.Resource == "fs")
		if err != nil {
			return nil, err
		}
		return append(out, filled(c, v, subtree)), nil
	case []any:
		if x == nil {
			break
		}
		for _, item := range x {
			s, _ := item.(string)
			v, err := templateValue(tool, name, s, isPath || c.Resource == "fs")
			if err != nil {
				return nil, err
			}
			out = append(out, filled(c, v, subtree))
		}
		return out, nil
	}
	return nil, templateError(tool, name, "is missing or not a string")
}

// filled is c with its scope the value v, or v's subtree.
func filled(c capability.Capability, v string, subtree bool) capability.Capability {
	if subtree {
		v = subtreeOf(v)
	}
	return capability.Capability{Resource: c.Resource, Verb: c.Verb, Scope: v}
}

// templateValue checks one value of argument name. A path argument, or
// any value that fills an fs scope (clean: a declared tool may fill one
// from a plain string param), is cleaned as a workspace path, so that
// "docs/../secrets" needs secrets and no lexical trick passes a deny.
func templateValue(tool *ToolInfo, name, s string, clean bool) (string, *toolerr.Error) {
	if s == "" {
		return "", templateError(tool, name, "holds an empty or non-string value")
	}
	if !clean {
		return s, nil
	}
	c, err := workspacepath.Clean(s)
	if err != nil {
		te := toolerr.As(err)
		return "", toolerr.New(te.Code, te.Hint, "argument %q: %s", name, te.Message).WithRule(te.Rule)
	}
	return c, nil
}

func templateError(tool *ToolInfo, name, what string) *toolerr.Error {
	return toolerr.New(toolerr.InvalidSchema, schemaHint,
		"argument %q of %s %s, so the capability it needs cannot be checked", name, tool.Name, what).WithRule("capabilities.argument")
}
