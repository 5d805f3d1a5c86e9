package guard

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/internal/workspacepath"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Validator checks arguments against each tool's input schema (strictly:
// the schemas forbid unknown fields) and applies the path rules to the
// arguments that hold workspace paths. A tool's schema is compiled at its
// first call, once, unless Compile compiled it before: a one-shot command
// or a server start pays for none of the schemas nobody calls.
type Validator struct {
	schemas map[string]*inputSchema
	paths   map[string][]string
	// control are the client control argument names to drop (see
	// controlargs.go).
	control []string
	// compiled counts the schemas compiled (Compiled).
	compiled atomic.Int64
	// mu guards the maps once the guard serves: an upstream's tools are
	// set again when it lists them anew (Guard.SetTools).
	mu sync.RWMutex
}

// inputSchema is one tool's schema, compiled and read at first need.
type inputSchema struct {
	compile func() (*jsonschema.Schema, error)
	// props holds the top-level property names of the schema (see
	// controlargs.go).
	props func() map[string]bool
}

// newInputSchema keeps raw, to be compiled for v at first need.
func (v *Validator) newInputSchema(name string, raw json.RawMessage) *inputSchema {
	return &inputSchema{
		compile: sync.OnceValues(func() (*jsonschema.Schema, error) {
			v.compiled.Add(1)
			return compileSchema(name, raw)
		}),
		props: sync.OnceValue(func() map[string]bool { return schemaProperties(raw) }),
	}
}

// compiledSchema is an inputSchema compiled already.
func compiledSchema(s *jsonschema.Schema, raw json.RawMessage) *inputSchema {
	return &inputSchema{
		compile: func() (*jsonschema.Schema, error) { return s, nil },
		props:   sync.OnceValue(func() map[string]bool { return schemaProperties(raw) }),
	}
}

// NewValidator keeps the input schemas, keyed by tool name, each to be
// compiled at its tool's first call; Compile compiles some at once.
func NewValidator(schemas map[string]json.RawMessage, pathArgs map[string][]string) (*Validator, error) {
	v := &Validator{schemas: make(map[string]*inputSchema, len(schemas)), paths: pathArgs}
	if v.paths == nil {
		v.paths = map[string][]string{}
	}
	for name, raw := range schemas {
		v.schemas[name] = v.newInputSchema(name, raw)
	}
	return v, nil
}

// Compile compiles the input schemas of the named tools now, so that a
// schema the operator supplied (a declared or an upstream tool) is
// refused when the server is built, not at its first call. It returns the
// first error, in the order of names; a name without a schema is skipped.
func (v *Validator) Compile(names ...string) error {
	for _, name := range names {
		v.mu.RLock()
		s, ok := v.schemas[name]
		v.mu.RUnlock()
		if !ok {
			continue
		}
		if _, err := s.compile(); err != nil {
			return err
		}
	}
	return nil
}

// Compiled reports how many input schemas the validator has compiled.
func (v *Validator) Compiled() int64 { return v.compiled.Load() }

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

// set sets the schema of the tool name, compiled already, replacing its
// old one, while calls are validated.
func (v *Validator) set(name string, s *jsonschema.Schema, raw json.RawMessage, paths []string) {
	in := compiledSchema(s, raw)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.schemas[name], v.paths[name] = in, paths
}

const schemaHint = "Call the tool with exactly the parameters in its inputSchema; unknown parameters are rejected."

// Validate checks args for tool. Missing arguments count as an empty object.
func (v *Validator) Validate(tool string, args any) *toolerr.Error {
	v.mu.RLock()
	in, ok := v.schemas[tool]
	paths := v.paths[tool]
	v.mu.RUnlock()
	if !ok {
		return toolerr.New(toolerr.Internal, "", "tool %q has no input schema", tool).WithRule("args.schema")
	}
	s, err := in.compile()
	if err != nil {
		// Not reachable for a tool the operator supplied (Compile at
		// build); a built-in schema that does not compile is a bug.
		return toolerr.New(toolerr.Internal, "", "%v", err).WithRule("args.schema")
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

// SchemasCompiled reports how many input schemas the guard has compiled:
// the operator's when it was built, a built-in tool's at its first call.
func (g *Guard) SchemasCompiled() int64 { return g.validator.Compiled() }
