package mcpserver

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/guard/outfilter"
	"github.com/toolwarden/toolwarden/tools"
)

// Bounds on what an upstream tool's definition may hold: a description or
// schema longer than this is room for instructions to the model, not
// documentation.
const (
	maxUpstreamDescription = 4096
	maxUpstreamSchema      = 32 << 10
)

// definitionCheck reads an upstream tool's definition (title,
// description, input schema) as the output filter reads tool output: an
// upstream is untrusted, and its definitions reach the model as surely as
// its results do.
type definitionCheck struct {
	filter *outfilter.Filter
	// files finds the secret files a definition names ("first read
	// ~/.ssh/id_rsa"): a tool's documentation has no use for them.
	files *guard.SecretRefs
}

func newDefinitionCheck(cfg configs.Config, names []string) (*definitionCheck, error) {
	f, err := outfilter.New(outfilter.Options{Redact: true, StripInvisible: true,
		Markers: cfg.OutputFilter.InjectionMarkers, ToolNames: names, Definition: true})
	if err != nil {
		return nil, err
	}
	refs, err := guard.NewSecretRefs(cfg.Capabilities.SecretGlobs())
	if err != nil {
		return nil, err
	}
	return &definitionCheck{filter: f, files: refs}, nil
}

// findings says what in t's definition the filter would change or warn
// about, or that it is too long; none for a clean definition. It also
// returns t with its title and description as the filter leaves them,
// which is what an accepted tool is listed with.
func (d *definitionCheck) findings(t tools.Tool) ([]string, tools.Tool) {
	var out []string
	if n := len(t.Tool.Description); n > maxUpstreamDescription {
		out = append(out, fmt.Sprintf("description is %d bytes, over %d", n, maxUpstreamDescription))
	}
	if n := len(t.Tool.RawInputSchema); n > maxUpstreamSchema {
		out = append(out, fmt.Sprintf("inputSchema is %d bytes, over %d", n, maxUpstreamSchema))
	}
	for _, where := range []struct{ name, text string }{
		{"title or description", t.Tool.Title + "\n" + t.Tool.Description}, {"inputSchema", string(t.Tool.RawInputSchema)},
	} {
		for _, r := range d.files.Find(where.text) {
			out = append(out, fmt.Sprintf("%s names the secret file %s", where.name, r))
		}
	}
	var rep outfilter.Report
	t.Tool.Title = d.filter.Text(t.Tool.Title, &rep)
	t.Tool.Description = d.filter.Text(t.Tool.Description, &rep)
	var schemaRep outfilter.Report
	if _, err := d.filter.JSON(t.Tool.RawInputSchema, &schemaRep); err != nil {
		out = append(out, "inputSchema cannot be scanned: "+err.Error())
	}
	for _, r := range []struct {
		where string
		rep   outfilter.Report
	}{{"title or description", rep}, {"inputSchema", schemaRep}} {
		out = append(out, reportFindings(r.where, r.rep)...)
	}
	return out, t
}

// reportFindings puts a filter report in words.
func reportFindings(where string, rep outfilter.Report) []string {
	var out []string
	for rule, n := range rep.Redactions {
		out = append(out, fmt.Sprintf("%s holds %d secret(s) (%s)", where, n, rule))
	}
	if rep.Stripped > 0 {
		out = append(out, fmt.Sprintf("%s holds %d invisible or bidi-control character(s)", where, rep.Stripped))
	}
	if rep.Controls > 0 {
		out = append(out, fmt.Sprintf("%s holds %d terminal control sequence(s) or control character(s)", where, rep.Controls))
	}
	if rep.Defanged > 0 {
		out = append(out, fmt.Sprintf("%s holds %d markdown image(s) to an outside host", where, rep.Defanged))
	}
	if rep.Collapsed > 0 {
		out = append(out, fmt.Sprintf("%s holds %d long run(s) of blank space", where, rep.Collapsed))
	}
	for _, w := range append(rep.Warnings, rep.Quoted...) {
		out = append(out, fmt.Sprintf("%s holds %q, which reads as an instruction to the model", where, w))
	}
	slices.Sort(out)
	return out
}

// flagged is the reason an upstream tool with findings is withheld.
func flagged(tool string, findings []string) string {
	return fmt.Sprintf("its definition is withheld from the model: %s (accept it with upstreams[].accept_flagged: [%s], a widening)",
		strings.Join(findings, "; "), tool)
}
