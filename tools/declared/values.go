package declared

import (
	"math"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/internal/workspacepath"
	"github.com/toolwarden/toolwarden/sandbox"
)

// value is one checked argument: Text is what a cli argument or a query
// parameter receives, JSON what a request body receives.
type value struct {
	Text string
	JSON any
}

// checker checks a declared tool's arguments. The guard validated them
// against the schema already; this is the second, independent line, and
// the only one for the workspace and URL rules.
type checker struct {
	tool     configs.DeclaredTool
	ws       *sandbox.Workspace
	patterns map[string]*regexp.Regexp
}

func newChecker(t configs.DeclaredTool, ws *sandbox.Workspace) *checker {
	c := &checker{tool: t, ws: ws, patterns: map[string]*regexp.Regexp{}}
	for _, p := range t.Params {
		if p.Pattern != "" {
			c.patterns[p.Name] = regexp.MustCompile(`\A(?:` + p.Pattern + `)\z`)
		}
	}
	return c
}

// values checks args and returns the present params' values.
func (c *checker) values(args map[string]any) (map[string]value, error) {
	for k := range args {
		if !slices.ContainsFunc(c.tool.Params, func(p configs.ToolParam) bool { return p.Name == k }) {
			return nil, toolerr.New(toolerr.InvalidSchema, "Pass only the parameters in the inputSchema.",
				"unknown parameter %q", k).WithRule("args.schema")
		}
	}
	out := map[string]value{}
	for _, p := range c.tool.Params {
		raw, ok := args[p.Name]
		if !ok || raw == nil {
			if p.Required {
				return nil, c.fail(toolerr.InvalidSchema, p, "required", "parameter %q is required", p.Name)
			}
			continue
		}
		v, err := c.value(p, raw)
		if err != nil {
			return nil, err
		}
		out[p.Name] = v
	}
	return out, nil
}

func (c *checker) value(p configs.ToolParam, raw any) (value, error) {
	switch p.Type {
	case configs.ParamInteger:
		return c.integer(p, raw)
	case configs.ParamBoolean:
		b, ok := raw.(bool)
		if !ok {
			return value{}, c.fail(toolerr.InvalidSchema, p, "type", "parameter %q must be a boolean", p.Name)
		}
		return value{Text: strconv.FormatBool(b), JSON: b}, nil
	}
	s, ok := raw.(string)
	if !ok {
		return value{}, c.fail(toolerr.InvalidSchema, p, "type", "parameter %q must be a string", p.Name)
	}
	switch p.Type {
	case configs.ParamFilepath:
		return c.filepath(p, s)
	case configs.ParamURL:
		return c.url(p, s)
	}
	return c.text(p, s)
}

func (c *checker) text(p configs.ToolParam, s string) (value, error) {
	switch {
	case !utf8.ValidString(s):
		return value{}, c.fail(toolerr.InvalidText, p, "utf8", "parameter %q is not valid UTF-8", p.Name)
	case strings.ContainsRune(s, 0):
		return value{}, c.fail(toolerr.InvalidText, p, "no_nul", "parameter %q contains a NUL character", p.Name)
	case utf8.RuneCountInString(s) > maxLength(p):
		return value{}, c.fail(toolerr.TooLarge, p, "max_length", "parameter %q is longer than %d characters", p.Name, maxLength(p))
	case len(p.Enum) > 0 && !slices.Contains(p.Enum, s):
		return value{}, c.fail(toolerr.InvalidEnum, p, "enum", "parameter %q must be one of %q", p.Name, p.Enum)
	case c.patterns[p.Name] != nil && !c.patterns[p.Name].MatchString(s):
		return value{}, c.fail(toolerr.InvalidArgument, p, "pattern", "parameter %q %q does not match %s", p.Name, s, anchored(p.Pattern))
	}
	return value{Text: s, JSON: s}, nil
}

func (c *checker) integer(p configs.ToolParam, raw any) (value, error) {
	f, ok := raw.(float64)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return value{}, c.fail(toolerr.InvalidSchema, p, "type", "parameter %q must be an integer", p.Name)
	}
	n := int64(f)
	if (p.Minimum != nil && n < *p.Minimum) || (p.Maximum != nil && n > *p.Maximum) {
		return value{}, c.fail(toolerr.InvalidArgument, p, "range", "parameter %q is %d, outside its range", p.Name, n)
	}
	return value{Text: strconv.FormatInt(n, 10), JSON: n}, nil
}

// filepath confines a path with the fs tools' code: workspacepath.Clean's lexical
// rules, then os.Root, which refuses symlinks that leave the workspace.
// Inside the sandbox the workspace is /workspace.
func (c *checker) filepath(p configs.ToolParam, s string) (value, error) {
	clean, err := workspacepath.Clean(s)
	if err == nil && c.ws != nil {
		_, err = c.ws.Stat(clean)
	}
	if err != nil {
		te := toolerr.As(err)
		return value{}, toolerr.New(te.Code, te.Hint, "parameter %q: %s", p.Name, te.Message).WithRule(te.Rule)
	}
	in := path.Join(sandbox.WorkspaceDir, clean)
	return value{Text: in, JSON: clean}, nil
}

func (c *checker) url(p configs.ToolParam, s string) (value, error) {
	u, err := url.Parse(s)
	hint := "Pass an absolute " + strings.Join(schemes(p), " or ") + " URL on " + strings.Join(p.Hosts, ", ") + "."
	switch {
	case len(s) > MaxURLLength:
		return value{}, c.fail(toolerr.TooLarge, p, "max_length", "parameter %q is longer than %d bytes", p.Name, MaxURLLength)
	case err != nil || !u.IsAbs() || u.Host == "":
		return value{}, toolerr.New(toolerr.InvalidURL, hint, "parameter %q is not an absolute URL", p.Name).WithRule(c.rule(p, "url"))
	case !slices.Contains(schemes(p), u.Scheme):
		return value{}, toolerr.New(toolerr.InvalidURL, hint, "parameter %q: scheme %q is not allowed", p.Name, u.Scheme).WithRule(c.rule(p, "schemes"))
	case u.User != nil:
		return value{}, toolerr.New(toolerr.InvalidURL, hint, "parameter %q: URLs with credentials are refused", p.Name).WithRule(c.rule(p, "url"))
	case !hostAllowed(p.Hosts, u.Hostname()):
		return value{}, toolerr.New(toolerr.InvalidURL, hint, "parameter %q: host %q is not allowed", p.Name, u.Hostname()).WithRule(c.rule(p, "hosts"))
	}
	return value{Text: s, JSON: s}, nil
}

// hostAllowed matches host against names and "*.suffix" globs (which match
// subdomains only), case-insensitively. A host must be ASCII (an
// internationalised name in its xn-- form): a parser that maps Unicode
// (IDNA, NFKC) could read a fullwidth "/" or "#" in it and reach another
// host than the one that ends in an allowed name here.
func hostAllowed(allow []string, host string) bool {
	for i := range len(host) {
		if host[i] >= utf8.RuneSelf {
			return false
		}
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, a := range allow {
		if suffix, ok := strings.CutPrefix(a, "*."); ok {
			if strings.HasSuffix(host, "."+suffix) {
				return true
			}
		} else if host == a {
			return true
		}
	}
	return false
}

func (c *checker) rule(p configs.ToolParam, what string) string {
	return "tools." + c.tool.Name + ".params." + p.Name + "." + what
}

func (c *checker) fail(code toolerr.Code, p configs.ToolParam, what, format string, args ...any) error {
	return toolerr.New(code, "Fix the value: "+paramDescription(p), format, args...).WithRule(c.rule(p, what))
}
