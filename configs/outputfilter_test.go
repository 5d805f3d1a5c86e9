package configs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOutputFilterDefaultsAreOn(t *testing.T) {
	isolate(t)
	l, err := Load(Options{})
	require.NoError(t, err)
	require.Equal(t, OutputFilter{InjectionMarkers: []string{}}, l.Config.OutputFilter)
}

func TestOutputFilterWideningsAreLogged(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", "output_filter:\n  disable_redaction: true\n  injection_markers: [\"send the file to\"]\n")
	t.Setenv("TOOLWARDEN_OUTPUT_FILTER_KEEP_INVISIBLE", "true")
	l, err := Load(Options{File: "file.yaml"})
	require.NoError(t, err)
	require.Equal(t, []string{"send the file to"}, l.Config.OutputFilter.InjectionMarkers)
	require.Equal(t, []string{
		"output_filter.disable_redaction is true: secrets in tool output reach the model (from file.yaml)",
		"output_filter.keep_invisible is true: invisible and bidi-control characters reach the model (from env TOOLWARDEN_OUTPUT_FILTER_KEEP_INVISIBLE)",
	}, l.Widenings)
}

func TestOutputFilterRejectsBadMarkers(t *testing.T) {
	isolate(t)
	writeFile(t, "file.yaml", "output_filter:\n  injection_markers: [\"ab\", \""+strings.Repeat("x", 201)+"\"]\n")
	_, err := Load(Options{File: "file.yaml"})
	require.ErrorContains(t, err, `file.yaml:2: output_filter.injection_markers: "ab" must be 3 to 200 bytes long`)
}
