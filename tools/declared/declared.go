// Package declared builds the tools an operator declares in YAML (the
// config's tools: section and tools.d/*.yaml): cli tools, which run a fixed
// argv template in the sandbox with each parameter substituted as exactly
// one argument, and http tools, which call one fixed endpoint with secrets
// the model never sees.
//
// The package is the declared-tool language: Check validates a
// declaration (names, argv templates, params, endpoints) for configs.Load,
// which knows only its YAML shape; ParseArg reads the argv templates.
//
// Their input schemas are generated from the declared params with the same
// conventions as the built-in tools' (strict objects, required lists,
// descriptions, bounds), so the guard validates them the same way; the
// handlers check every value again before anything runs.
package declared

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/tools"
)

// Toolset is the Meta.Toolset of every declared tool.
const Toolset = "declared"

// build makes the tools.Tool for t around a typed handler.
func build[Out any](t configs.DeclaredTool, returns, sideEffects string, h tools.Handler[map[string]any, Out]) tools.Tool {
	ann := tools.Annotations{
		Title:       t.Annotations.Title,
		ReadOnly:    t.Annotations.ReadOnly,
		Destructive: t.Annotations.Destructive,
		Idempotent:  t.Annotations.Idempotent,
		OpenWorld:   t.Type == configs.ToolHTTP,
	}
	if ann.Title == "" {
		ann.Title = t.Name
	}
	if t.Annotations.OpenWorld != nil {
		ann.OpenWorld = *t.Annotations.OpenWorld
	}
	meta := tools.Meta{
		Toolset:          Toolset,
		Capabilities:     capabilities(t),
		RequiresApproval: t.ApprovalRequired(),
		HighRisk:         !t.Annotations.ReadOnly,
		PathArgs:         pathArgs(t),
		Timeout:          t.Timeout,
		MaxOutputBytes:   t.MaxOutputBytes,
	}
	tool := tools.New(t.Name, description(t, returns, sideEffects), ann, meta, h)
	tool.Tool.RawInputSchema = InputSchema(t)
	return tool
}

// capabilities are the declared ones, or proc:exec:<program> for a cli
// tool and net:connect:<host:port> for an http tool; and, in either case,
// fs:read:{param} for each filepath param, which the program reads like
// read_file reads its path: the policy's fs:read grants and denies apply.
func capabilities(t configs.DeclaredTool) []string {
	caps := slices.Clone(t.Capabilities)
	switch {
	case len(caps) > 0:
	case t.Type == configs.ToolCLI:
		caps = []string{"proc:exec:" + t.Command[0]}
	default:
		caps = []string{"net:connect:" + hostPort(t.BaseURL)}
	}
	for _, p := range pathArgs(t) {
		if c := "fs:read:{" + p + "}"; !slices.Contains(caps, c) {
			caps = append(caps, c)
		}
	}
	return caps
}

// hostPort is the host:port a URL connects to.
func hostPort(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return net.JoinHostPort(u.Hostname(), port)
}

func pathArgs(t configs.DeclaredTool) []string {
	var out []string
	for _, p := range t.Params {
		if p.Type == configs.ParamFilepath {
			out = append(out, p.Name)
		}
	}
	return out
}

// description is the operator's text followed by the sections every
// toolwarden tool describes, generated from the declaration.
func description(t configs.DeclaredTool, returns, sideEffects string) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(t.Description))
	b.WriteString("\n\nWhen to use: as described above; this tool was declared by the server's operator.\n\nParameters:\n")
	if len(t.Params) == 0 {
		b.WriteString("- none\n")
	}
	for _, p := range t.Params {
		req := "optional"
		if p.Required {
			req = "required"
		}
		fmt.Fprintf(&b, "- %s (%s, %s): %s\n", p.Name, p.Type, req, paramDescription(p))
	}
	fmt.Fprintf(&b, "\nReturns: %s\n\n", returns)
	b.WriteString("Errors: invalid_argument.* naming the parameter's rule when a value breaks it (nothing runs then); ")
	if t.Type == configs.ToolCLI {
		b.WriteString("invalid_argument.flag_not_allowed for a value starting with \"-\" where it could be read as a flag; sandbox.failed; canceled.\n\n")
	} else {
		b.WriteString("upstream.status for a non-2xx answer; backend.unavailable when the endpoint cannot be reached; denied.not_allowed for a redirect to another host; limit.timeout; canceled.\n\n")
	}
	fmt.Fprintf(&b, "Side effects: %s\n\nExample: %s", sideEffects, example(t))
	return b.String()
}

// example is a JSON call with a plausible value for each required param.
func example(t configs.DeclaredTool) string {
	ex := map[string]any{}
	for _, p := range t.Params {
		if !p.Required {
			continue
		}
		switch p.Type {
		case configs.ParamInteger:
			v := int64(1)
			if p.Minimum != nil {
				v = *p.Minimum
			}
			ex[p.Name] = v
		case configs.ParamBoolean:
			ex[p.Name] = true
		case configs.ParamFilepath:
			ex[p.Name] = "path/to/file"
		case configs.ParamURL:
			ex[p.Name] = "https://" + strings.TrimPrefix(p.Hosts[0], "*.") + "/"
		default:
			ex[p.Name] = "text"
			if len(p.Enum) > 0 {
				ex[p.Name] = p.Enum[0]
			}
		}
	}
	b, _ := json.Marshal(ex)
	return string(b)
}
