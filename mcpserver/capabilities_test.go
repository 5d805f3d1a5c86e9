package mcpserver_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/capability"
	"github.com/toolwarden/toolwarden/mcpserver"
	"github.com/toolwarden/toolwarden/tools"
)

var templateArg = regexp.MustCompile(`\{([a-z_]+)\}`)

// TestToolCapabilitiesAndEffects checks, across every tool, that declared
// capabilities are well formed, that their templates name real input
// parameters, that the embedded default config grants what each tool's
// example call needs (so enabling a toolset needs no capability edit), and
// that the annotations agree with the effects the capabilities imply.
func TestToolCapabilitiesAndEffects(t *testing.T) {
	f := newFixture(t)
	withExec(t, f)
	b := f.server(t)
	policy, err := guard.Policy{}.WithCapabilities(f.cfg.Capabilities.Grant, f.cfg.Capabilities.Deny)
	require.NoError(t, err)
	infos := mcpserver.GuardInfo(b.Tools)
	for i, tool := range b.Tools {
		tl := tool.Tool
		t.Run(tl.Name, func(t *testing.T) {
			var in struct {
				Properties map[string]any `json:"properties"`
			}
			require.NoError(t, json.Unmarshal(tl.RawInputSchema, &in))
			for _, c := range tool.Meta.Capabilities {
				filled := c
				for _, m := range templateArg.FindAllStringSubmatch(c, -1) {
					require.Contains(t, in.Properties, m[1], "capability %s fills an unknown parameter", c)
					filled = strings.ReplaceAll(filled, m[0], "x")
				}
				_, err := capability.Parse(filled)
				require.NoError(t, err)
			}
			example := tl.Description[strings.LastIndex(tl.Description, "Example: ")+len("Example: "):]
			var args any
			require.NoError(t, json.Unmarshal([]byte(example), &args))
			needs, terr := guard.Needs(&infos[i], args)
			require.Nil(t, terr)
			for _, n := range needs {
				granted := false
				for _, g := range policy.Grants {
					granted = granted || capability.Covers(g, n)
				}
				require.True(t, granted, "the default config does not grant %s", n)
			}

			readOnly, idempotent, openWorld := tools.EffectsOf(tool).Hints()
			a := tl.Annotations
			require.Equal(t, readOnly, *a.ReadOnlyHint, "readOnlyHint disagrees with the capabilities %v", tool.Meta.Capabilities)
			require.Equal(t, idempotent, *a.IdempotentHint)
			require.Equal(t, openWorld, *a.OpenWorldHint, "openWorldHint disagrees with the capabilities %v", tool.Meta.Capabilities)
		})
	}
}
