package mcpserver

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/upstream/pin"
)

// pinGate compares each upstream's listing with its pins and applies
// upstream_pins: under block and trust_on_first_use a tool (or prompt)
// whose definition differs is hidden and its calls (gets) get
// denied.tool_drift; under warn it runs. Every difference is logged and
// audited. A nil gate (no upstreams) pins nothing.
type pinGate struct {
	mode string
	// file is the pins file the pins come from ("" when they come from
	// the state directory's record, tofu).
	file string
	// tofu is the record of first listings in the state directory ("" when
	// a pins file is used).
	tofu string
	log  *slog.Logger

	mu      sync.Mutex
	base    pin.File
	drifted map[string]pin.Change // by namespaced tool; never under warn
	// promptDrifted are the prompts refused, by namespaced prompt.
	promptDrifted map[string]pin.Change
	digests       map[string]string // by namespaced tool: the listed definition's
	noted         map[string]string // by "tool <name>" or "prompt <name>": the last drift audited
	pending       []driftEvent      // until the guard exists (bind)
	guard         *guard.Guard
	changed       func() // tells the clients that the tool list changed
	// set registers upstream tools listed again (add) and drops those no
	// longer offered (del), telling the clients.
	set func(add []tools.Tool, del []string) error
}

type driftEvent struct{ tool, code, pinned, listed string }

// newPinGate reads the pins of cfg's upstreams: the pins file beside the
// config file if there is one, else (trust_on_first_use, or warn without
// a pins file) the record in the state directory. A pins file or record
// that cannot be read stops the server: the pins are what it checks.
func newPinGate(cfg configs.Config, log *slog.Logger) (*pinGate, error) {
	if len(cfg.Upstreams) == 0 {
		return nil, nil
	}
	g := &pinGate{mode: cfg.PinsMode(), log: log, drifted: map[string]pin.Change{}, promptDrifted: map[string]pin.Change{}, digests: map[string]string{},
		noted: map[string]string{}, base: pin.File{Upstreams: map[string]pin.Upstream{}}}
	file := configs.PinsFile(cfg.File)
	if _, err := os.Stat(file); err == nil || g.mode == configs.PinsBlock {
		g.file = file
	} else {
		g.tofu = tofuRecord(cfg.File)
		file = g.tofu
	}
	f, err := pin.Read(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		log.Info("upstream pins", "mode", g.mode, "file", file, "pinned", "none yet")
	case err != nil:
		return nil, &startupError{msg: "upstream_pins: " + err.Error()}
	default:
		g.base = f
		log.Info("upstream pins", "mode", g.mode, "file", file, "upstreams", len(f.Upstreams))
	}
	return g, nil
}

// tofuRecord is the record of first listings of the config file at file,
// in the state directory: one per config file, so that two configs with
// an upstream of the same name do not share pins.
func tofuRecord(file string) string {
	if abs, err := filepath.Abs(file); err == nil && file != "" {
		file = abs
	}
	sum := sha256.Sum256([]byte(file))
	return filepath.Join(stateDir(), "pins", hex.EncodeToString(sum[:8])+".json")
}

// writeRecord writes the record of first listings f to file, in the
// state directory.
func writeRecord(file string, f pin.File) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	return pin.Write(file, f)
}

// check compares upstream's listing with its pins and applies the mode.
// An upstream not pinned yet is pinned now when the pins are the state
// directory's record (trust on first use); with a pins file, each of its
// tools is a change (added). It returns the changes and whether what
// clients are offered changed.
func (g *pinGate) check(upstream string, listing pin.Upstream) ([]pin.Change, bool) {
	if g == nil {
		return nil, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	base, ok := g.base.Upstreams[upstream]
	if (!ok || base.Tools == nil) && g.tofu != "" {
		listing.Prompts = base.Prompts // recorded first, or not yet
		base, ok = listing, true
		g.base.Upstreams[upstream] = listing
		if err := writeRecord(g.tofu, g.base); err != nil {
			g.log.Error("upstream pinned on first use, but the record could not be written: it is pinned for this run only", "upstream", upstream, "file", g.tofu)
		} else {
			g.log.Info("upstream pinned on first use", "upstream", upstream, "file", g.tofu, "tools", len(listing.Tools))
		}
	}
	changes := pin.Compare(base, listing)
	prefix := upstream + configs.UpstreamSep
	for name, t := range listing.Tools {
		g.digests[prefix+name] = t.Digest
	}
	return changes, g.applyAll(g.drifted, upstream, changes, ok)
}

// checkPrompts is check for the prompts upstream lists (pinned by
// pin.Prompts, as listed by server). Under trust on first use, prompts
// not recorded yet (a record taken before prompts were pinned) are
// recorded now; with a pins file, each prompt of an upstream pinned
// without prompts is a change (added), refused under block as an
// unpinned tool is.
func (g *pinGate) checkPrompts(upstream string, server pin.Server, prompts map[string]pin.Tool) ([]pin.Change, bool) {
	if g == nil {
		return nil, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	base, ok := g.base.Upstreams[upstream]
	if (!ok || base.Prompts == nil) && g.tofu != "" {
		if !ok {
			base.Server = server // its tools are recorded when they are checked
		}
		base.Prompts, ok = prompts, true
		g.base.Upstreams[upstream] = base
		if err := writeRecord(g.tofu, g.base); err != nil {
			g.log.Error("upstream prompts pinned on first use, but the record could not be written: they are pinned for this run only", "upstream", upstream, "file", g.tofu)
		} else {
			g.log.Info("upstream prompts pinned on first use", "upstream", upstream, "file", g.tofu, "prompts", len(prompts))
		}
	}
	changes := pin.ComparePrompts(base, pin.Upstream{Server: server, Prompts: prompts})
	return changes, g.applyAll(g.promptDrifted, upstream, changes, ok && base.Prompts != nil)
}

// applyAll applies upstream's changes to drifted (its tools' or its
// prompts') anew and reports whether which are refused changed.
func (g *pinGate) applyAll(drifted map[string]pin.Change, upstream string, changes []pin.Change, pinned bool) bool {
	prefix := upstream + configs.UpstreamSep
	before := hiddenOf(drifted, prefix)
	for name := range drifted {
		if strings.HasPrefix(name, prefix) {
			delete(drifted, name)
		}
	}
	for _, c := range changes {
		g.apply(drifted, upstream, prefix+c.Tool, c, pinned)
	}
	return before != hiddenOf(drifted, prefix)
}

// apply records one change of a tool or prompt (named ns) in drifted and
// audits it once.
func (g *pinGate) apply(drifted map[string]pin.Change, upstream, ns string, c pin.Change, pinned bool) {
	code := ""
	if g.mode != configs.PinsWarn {
		drifted[ns] = c
		code = string(toolerr.DeniedToolDrift)
	}
	what := c.FieldNames()
	if !pinned {
		what = "upstream not pinned"
		if c.Prompt {
			what = "upstream's prompts not pinned"
		}
	}
	g.log.Warn("upstream "+c.What()+" differs from its pin", "upstream", upstream, c.What(), c.Tool, "change", what,
		"pinned", c.OldDigest, "listed", c.NewDigest, "mode", g.mode, "refused", code != "")
	key := c.What() + " " + ns
	if g.noted[key] == string(c.Kind)+c.NewDigest {
		return
	}
	g.noted[key] = string(c.Kind) + c.NewDigest
	e := driftEvent{tool: ns, code: code, pinned: c.OldDigest, listed: c.NewDigest}
	if g.guard == nil {
		g.pending = append(g.pending, e)
		return
	}
	g.record(e)
}

func (g *pinGate) record(e driftEvent) {
	if err := g.guard.Drift(e.tool, "upstream_pins."+g.mode, e.code, e.pinned, e.listed); err != nil {
		g.log.Error("the drift of an upstream tool could not be audited", "tool", e.tool, "err", err)
	}
}

// hiddenOf is a digest of which of prefix's tools (or prompts) drifted
// holds, to tell whether a listing changed what clients are offered.
func hiddenOf(drifted map[string]pin.Change, prefix string) string {
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(drifted)) {
		if strings.HasPrefix(name, prefix) {
			fmt.Fprintln(h, name, drifted[name].NewDigest)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// bind audits the drift found before the guard existed, and every later
// one through g; changed is called when a re-listing changes what
// clients are offered.
func (g *pinGate) bind(gd *guard.Guard, changed func(), set func([]tools.Tool, []string) error) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.guard, g.changed, g.set = gd, changed, set
	for _, e := range g.pending {
		g.record(e)
	}
	g.pending = nil
}

// offer registers the upstream tools listed again whose definitions are
// new or changed (add) and drops those no longer offered (del), then
// tells the clients that the tool list changed: when either happened or
// when which tools are refused as drift did (hiddenChanged).
func (g *pinGate) offer(add []tools.Tool, del []string, hiddenChanged bool) {
	if g == nil {
		return
	}
	g.mu.Lock()
	set, notify := g.set, g.changed
	g.mu.Unlock()
	if set != nil && (len(add) > 0 || len(del) > 0) {
		if err := set(add, del); err != nil {
			g.log.Error("upstream tools listed again could not be offered; the earlier ones stay", "err", err)
		}
		return // mcp-go told the clients
	}
	if hiddenChanged && notify != nil {
		notify()
	}
}

// hidden reports whether tool is refused as drift, and so not offered.
func (g *pinGate) hidden(tool string) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.drifted[tool]
	return ok
}

// digest is the digest of the definition tool was listed with, "" for a
// tool that is not an upstream's.
func (g *pinGate) digest(tool string) string {
	if g == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.digests[tool]
}

// promptHidden reports whether prompt is refused as drift, and so not
// offered.
func (g *pinGate) promptHidden(prompt string) bool {
	return g.promptRefusal(prompt) != nil
}

// refusal is the error a call of tool gets when it is refused as drift.
func (g *pinGate) refusal(tool string) *toolerr.Error {
	return g.refusalIn(func() map[string]pin.Change { return g.drifted }, tool)
}

// promptRefusal is the error a get of prompt gets when it is refused as
// drift.
func (g *pinGate) promptRefusal(prompt string) *toolerr.Error {
	return g.refusalIn(func() map[string]pin.Change { return g.promptDrifted }, prompt)
}

func (g *pinGate) refusalIn(drifted func() map[string]pin.Change, name string) *toolerr.Error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := drifted()[name]
	if !ok {
		return nil
	}
	hint := "The upstream server changed this " + c.What() + " since the operator approved it; do not retry. " +
		"The operator must review the change (toolwarden pin --check) and re-pin it with `toolwarden pin`."
	what := "changed since it was pinned: " + c.FieldNames()
	switch {
	case c.Kind == pin.Added && c.OldDigest == "" && g.file != "":
		what = "is not in the pins file " + g.file
	case c.Kind == pin.Added:
		what = "was added after its upstream was pinned"
	case c.Kind == pin.Removed:
		what = "is no longer listed by its upstream"
	}
	return toolerr.New(toolerr.DeniedToolDrift, hint, "%s %q %s (pinned %s, listed %s)", c.What(), name, what,
		orNone(c.OldDigest), orNone(c.NewDigest)).WithRule("upstream_pins." + g.mode)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
