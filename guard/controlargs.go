package guard

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// Clients add control arguments of their own to every tool call: Gemini
// CLI sends "wait_for_previous" (it asks the model to set it on calls that
// depend on an earlier one) and forwards it unchanged. The schemas stay
// strict (additionalProperties: false); instead the configured names
// (policy.client_control_args) are dropped before validation, and only
// for tools whose own schema does not define them, so a tool that takes
// such an argument still gets it and every other unknown key is still
// refused (args.schema).

// WithControlArgs sets the names of client control arguments to drop. It
// must be called before the validator is used.
func (v *Validator) WithControlArgs(names []string) *Validator {
	v.control = slices.Clone(names)
	return v
}

// DropControlArgs removes from args the client control arguments that the
// tool's schema does not define, and returns the arguments the tool is to
// receive with the names dropped (sorted). args itself is not changed.
func (v *Validator) DropControlArgs(tool string, args any) (any, []string) {
	m, ok := args.(map[string]any)
	if !ok || v == nil || len(v.control) == 0 {
		return args, nil
	}
	props := v.properties(tool)
	var dropped []string
	for _, name := range v.control {
		if _, sent := m[name]; sent && !props[name] {
			dropped = append(dropped, name)
		}
	}
	if len(dropped) == 0 {
		return args, nil
	}
	out := make(map[string]any, len(m))
	for k, val := range m {
		if !slices.Contains(dropped, k) {
			out[k] = val
		}
	}
	slices.Sort(dropped)
	return out, dropped
}

// DropControlArgs is Validator.DropControlArgs for a call with the JSON it
// came from: the returned call holds the arguments the tool receives (so
// the audit digest is theirs) and names the dropped ones in Dropped, and
// the returned JSON is those arguments, for the handler to decode. Nothing
// changes when nothing is dropped.
func (g *Guard) DropControlArgs(call Call, raw json.RawMessage) (Call, json.RawMessage) {
	args, dropped := g.validator.DropControlArgs(call.Tool, call.Args)
	if len(dropped) == 0 {
		return call, raw
	}
	out, err := json.Marshal(args)
	if err != nil {
		// The values came from JSON; they encode again. Keep the call
		// as sent, so that validation refuses it rather than guess.
		return call, raw
	}
	call.Args, call.Dropped = args, dropped
	return call, out
}

// schemaProperties returns the names a JSON schema's top-level
// "properties" defines.
// properties are the top-level property names tool's input schema
// declares (nil for an unknown tool), read at first need.
func (v *Validator) properties(tool string) map[string]bool {
	if v == nil {
		return nil
	}
	v.mu.RLock()
	in := v.schemas[tool]
	v.mu.RUnlock()
	if in == nil {
		return nil
	}
	return in.props()
}

func schemaProperties(raw json.RawMessage) map[string]bool {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&s); err != nil {
		return nil
	}
	out := make(map[string]bool, len(s.Properties))
	for k := range s.Properties {
		out[k] = true
	}
	return out
}

// droppedNote is the trace detail of a call whose control arguments were
// dropped.
func droppedNote(dropped []string) string {
	return "dropped client control arguments " + strings.Join(dropped, ", ") + " (policy.client_control_args)"
}
