package configs

import "fmt"

// OutputFilter configures the filter every tool result passes through
// before the model sees it.
type OutputFilter struct {
	// DisableRedaction stops replacing secrets (gitleaks' default rules,
	// plus passwords in URLs) by [REDACTED:rule]: a widening. The zero
	// value is the secure one, so a Config built in code redacts too.
	DisableRedaction bool `mapstructure:"disable_redaction" yaml:"disable_redaction"`
	// KeepInvisible stops removing invisible and bidi-control characters:
	// a widening. Control characters and terminal escapes are removed all
	// the same.
	KeepInvisible bool `mapstructure:"keep_invisible" yaml:"keep_invisible"`
	// InjectionMarkers are phrases added to the built-in list of text that
	// looks like instructions to the model; a result holding one gets a
	// warning. The text itself is left as it is.
	InjectionMarkers []string `mapstructure:"injection_markers" yaml:"injection_markers"`
}

const maxMarkerLen = 200

func (o OutputFilter) validate(add func(string, string, ...any)) {
	for _, m := range o.InjectionMarkers {
		if len(m) < 3 || len(m) > maxMarkerLen {
			add("output_filter.injection_markers", "%q must be 3 to %d bytes long", m, maxMarkerLen)
		}
	}
}

// outputFilterWidenings lists the filter's steps that are turned off.
func outputFilterWidenings(l *Loaded) []string {
	var out []string
	o := l.Config.OutputFilter
	if o.DisableRedaction {
		out = append(out, fmt.Sprintf("output_filter.disable_redaction is true: secrets in tool output reach the model (from %s)", l.Origin("output_filter.disable_redaction")))
	}
	if o.KeepInvisible {
		out = append(out, fmt.Sprintf("output_filter.keep_invisible is true: invisible and bidi-control characters reach the model (from %s)", l.Origin("output_filter.keep_invisible")))
	}
	return out
}
