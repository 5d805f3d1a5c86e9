package guard

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/internal/workspacepath"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Validator checks arguments against each tool's input schema (strictly:
// the schemas forbid unknown fields) and applies the path rules to the
// arguments that hold workspace paths.
type Validator struct {
	schemas map[string]*jsonschema.Schema
	paths   map[string][]string
	// props holds the top-level property names of each tool's schema,
	// and control the client control argument names to drop (see
	// controlargs.go).
	props   map[string]map[string]bool
	control []string
	// mu guards the maps once the guard serves: an upstream's tools are
	// set again when it lists them anew (Guard.SetTools).
	mu sync.RWMutex
}

// NewValidator compiles the input schemas, keyed by tool name.
func NewValidator(schemas map[string]json.RawMessage, pathArgs map[string][]string) (*Validator, error) {
	v := &Validator{schemas: map[string]*jsonschema.Schema{}, paths: pathArgs, props: map[string]map[string]bool{}}
	if v.paths == nil {
		v.paths = map[string][]string{}
	}
	for name, raw := range schemas {
		s, err := compileSchema(name, raw)
		if err != nil {
			return nil, err
		}
		v.props[name] = schemaProperties(raw)
		v.schemas[name] = s
	}
	return v, nil
}

func compileSchema(name string, raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	url := "toolwarden:///" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", name, err)
	}
	return s, nil
}

// set compiles and sets the schema of the tool name, replacing its old
// one, while calls are validated.
func (v *Validator) set(name string, raw json.RawMessage, paths []string) error {
	s, err := compileSchema(name, raw)
	if err != nil {
		return err
	}
	props := schemaProperties(raw)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.schemas[name], v.props[name], v.paths[name] = s, props, paths
	return nil
}

const schemaHint = "Call the tool with exactly the parameters in its inputSchema; unknown parameters are rejected."

// Validate checks args for tool. Missing arguments count as an empty object.
func (v *Validator) Validate(tool string, args any) *toolerr.Error {
	v.mu.RLock()
	s, ok := v.schemas[tool]
	paths := v.paths[tool]
	v.mu.RUnlock()
	if !ok {
		return toolerr.New(toolerr.Internal, "", "tool %q has no input schema", tool).WithRule("args.schema")
	}
	if args == nil {
		args = map[string]any{}
	}
	if err := checkShape(args, 0); err != nil {
		return err
	}
	if err := s.Validate(args); err != nil {
		return toolerr.New(toolerr.InvalidSchema, schemaHint, "arguments do not match the input schema: %s",
			describe(err)).WithRule("args.schema")
	}
	m, _ := args.(map[string]any)
	for _, name := range paths {
		if err := checkPathArg(name, m[name]); err != nil {
			return err
		}
	}
	return nil
}

// Bounds on the shape of arguments, checked before the schema: the schema
// validator checks integers with math/big, so a number like 1e999999 costs
// it tens of milliseconds; numbers must fit a float64.
const (
	maxArgDepth     = 32
	maxNumberLength = 40
)

func checkShape(v any, depth int) *toolerr.Error {
	if depth > maxArgDepth {
		return toolerr.New(toolerr.InvalidSchema, schemaHint, "arguments are nested more than %d levels deep", maxArgDepth).WithRule("args.depth")
	}
	switch x := v.(type) {
	case json.Number:
		if _, err := x.Float64(); err != nil || len(x) > maxNumberLength {
			return toolerr.New(toolerr.InvalidSchema, schemaHint,
				"number %.20s… is out of range or written with more than %d characters", x, maxNumberLength).WithRule("args.number")
		}
	case map[string]any:
		for _, e := range x {
			if err := checkShape(e, depth+1); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := checkShape(e, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkPathArg(name string, val any) *toolerr.Error {
	var list []any
	switch x := val.(type) {
	case string:
		list = []any{x}
	case []any:
		list = x
	default:
		return nil
	}
	for _, item := range list {
		s, _ := item.(string)
		if _, err := workspacepath.Clean(s); err != nil {
			te := toolerr.As(err)
			return toolerr.New(te.Code, te.Hint, "argument %q: %s", name, te.Message).WithRule(te.Rule)
		}
	}
	return nil
}

var defaultPrinter = message.NewPrinter(language.English)

// describe flattens a schema validation error into one line.
func describe(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var parts []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			parts = append(parts, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(defaultPrinter)))
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(parts) > 5 {
		parts = append(parts[:5], fmt.Sprintf("and %d more", len(parts)-5))
	}
	return strings.Join(parts, "; ")
}
