package mcpserver

import (
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/guard/outfilter"
)

// argScan is the guard's argument scanning from the config (arguments.*).
// It shares the output filter when that redacts; with
// output_filter.disable_redaction, arguments still get a filter that finds
// secrets, as sending one out is not what that widening is about.
func argScan(cfg configs.Config, output *outfilter.Filter, names []string) (guard.ArgScan, error) {
	f := output
	if cfg.OutputFilter.DisableRedaction {
		var err error
		if f, err = outfilter.New(outfilter.Options{Redact: true, StripInvisible: true,
			Markers: cfg.OutputFilter.InjectionMarkers, ToolNames: names}); err != nil {
			return guard.ArgScan{}, err
		}
	}
	a := guard.DefaultArgScan(f)
	if cfg.Arguments.Secrets != "" {
		a.Secrets = cfg.Arguments.Secrets
	}
	if cfg.Arguments.Markers != "" {
		a.Markers = cfg.Arguments.Markers
	}
	a.Tools = make(map[string]guard.ArgRule, len(cfg.Arguments.Tools))
	for g, r := range cfg.Arguments.Tools {
		a.Tools[g] = guard.ArgRule{Secrets: r.Secrets, Markers: r.Markers}
	}
	return a, nil
}
