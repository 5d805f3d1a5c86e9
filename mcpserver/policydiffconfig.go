package mcpserver

import (
	"fmt"
	"iter"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/capability"
)

// diffCapabilities compares capabilities.grant and deny, and each
// identities rule's grant and revoke: a grant NEW adds that no grant of
// OLD covers widens, a deny OLD had that NEW lost widens too.
func (d *PolicyDiff) diffCapabilities(oldCfg, newCfg configs.Config) {
	d.diffGrants("", "capabilities.grant", oldCfg.Capabilities.Grant, newCfg.Capabilities.Grant, false)
	d.diffGrants("", "capabilities.deny", oldCfg.Capabilities.Deny, newCfg.Capabilities.Deny, true)
	rules := map[string][2]*configs.IdentityRule{}
	for i, r := range oldCfg.Identities {
		p := rules[r.Name]
		p[0] = &oldCfg.Identities[i]
		rules[r.Name] = p
	}
	for i, r := range newCfg.Identities {
		p := rules[r.Name]
		p[1] = &newCfg.Identities[i]
		rules[r.Name] = p
	}
	for _, name := range slices.Sorted(mapsKeys(rules)) {
		p := rules[name]
		if p[0] == nil || p[1] == nil {
			continue // the tool entries of its caller say what it changes
		}
		who := "identities[" + name + "]"
		// An empty grant list bounds nothing: any grant is covered.
		og, ng := p[0].Grant, p[1].Grant
		if len(og) > 0 && len(ng) == 0 {
			d.Widenings = append(d.Widenings, Change{Kind: "capability", Caller: who, Item: who + ".grant", Old: strings.Join(og, " "), New: "(no bound)"})
		} else if len(og) > 0 {
			d.diffGrants(who, who+".grant", og, ng, false)
		}
		d.diffGrants(who, who+".revoke", p[0].Revoke, p[1].Revoke, true)
	}
}

// diffGrants compares two lists of capabilities: for grants, one in new
// that no old one covers is a widening (and the reverse a narrowing);
// for denials, the other way round.
func (d *PolicyDiff) diffGrants(who, key string, old, new []string, deny bool) {
	wider, narrower := uncovered(old, new), uncovered(new, old)
	if deny {
		wider, narrower = narrower, wider
	}
	for _, c := range wider {
		d.Widenings = append(d.Widenings, capChange(who, key, c, deny))
	}
	for _, c := range narrower {
		d.Narrowings = append(d.Narrowings, capChange(who, key, c, !deny))
	}
}

func capChange(who, key, c string, lifted bool) Change {
	if lifted {
		return Change{Kind: "capability", Caller: who, Item: c, Old: "denied by " + key, New: "not denied"}
	}
	return Change{Kind: "capability", Caller: who, Item: c, Old: "not granted", New: "granted by " + key}
}

// uncovered lists the capabilities of b that no capability of a covers
// (capability.Covers, the guard's own rule). One that does not parse is
// never covered: the diff fails towards reporting.
func uncovered(a, b []string) []string {
	var out []string
	for _, s := range b {
		need, err := capability.Parse(s)
		covered := slices.ContainsFunc(a, func(g string) bool {
			if g == s {
				return true
			}
			gc, gerr := capability.Parse(g)
			return err == nil && gerr == nil && capability.Covers(gc, need)
		})
		if !covered && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// diffLimits compares every number of limits, fs, exec.limits, http,
// approval, artifacts and the identities rules' limits: larger is wider.
// Where 0 means no bound (limits.rate_per_minute, burst,
// max_bytes_in_per_session, budget, limits.tools and the identities
// rules' limits), 0 and a missing entry count as infinite.
func (d *PolicyDiff) diffLimits(oldCfg, newCfg configs.Config) {
	o, n := limitsOf(oldCfg), limitsOf(newCfg)
	for _, k := range slices.Sorted(mapsKeys(union2(o, n))) {
		ov, ok1 := o[k]
		nv, ok2 := n[k]
		of, nf := boundOf(k, ov, ok1), boundOf(k, nv, ok2)
		c := Change{Kind: "limit", Item: k, Old: showBound(ov, ok1, of), New: showBound(nv, ok2, nf)}
		switch {
		case nf > of:
			d.Widenings = append(d.Widenings, c)
		case nf < of:
			d.Narrowings = append(d.Narrowings, c)
		}
	}
}

// limitsOf flattens the numbers of cfg's bounds to key → value.
func limitsOf(cfg configs.Config) map[string]reflect.Value {
	out := map[string]reflect.Value{}
	flatten("limits", reflect.ValueOf(cfg.Limits), out)
	flatten("fs", reflect.ValueOf(cfg.FS), out)
	flatten("exec.limits", reflect.ValueOf(cfg.Exec.Limits), out)
	flatten("http", reflect.ValueOf(cfg.HTTP), out)
	flatten("approval", reflect.ValueOf(cfg.Approval), out)
	flatten("artifacts", reflect.ValueOf(cfg.Artifacts), out)
	for _, r := range cfg.Identities {
		flatten("identities["+r.Name+"].limits", reflect.ValueOf(r.Limits), out)
	}
	return out
}

func flatten(key string, v reflect.Value, out map[string]reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("mapstructure"), ",")
			if tag != "" && tag != "-" {
				flatten(key+"."+tag, v.Field(i), out)
			}
		}
	case reflect.Map:
		if v.Type().Key().Kind() == reflect.String {
			for _, k := range v.MapKeys() {
				flatten(key+"."+k.String(), v.MapIndex(k), out)
			}
		}
	case reflect.Int, reflect.Int64, reflect.Float64:
		out[key] = v
	}
}

// zeroUnbounded reports whether 0 (or no entry) means no bound at key.
func zeroUnbounded(key string) bool {
	switch key {
	case "limits.rate_per_minute", "limits.burst", "limits.max_bytes_in_per_session", "limits.budget":
		return true
	}
	return strings.HasPrefix(key, "limits.tools.") || strings.HasPrefix(key, "identities[")
}

func boundOf(key string, v reflect.Value, ok bool) float64 {
	var f float64
	if ok {
		if v.CanFloat() {
			f = v.Float()
		} else {
			f = float64(v.Int())
		}
	}
	if zeroUnbounded(key) && f == 0 {
		return math.Inf(1)
	}
	return f
}

func showBound(v reflect.Value, ok bool, f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "no bound"
	case v.Type() == reflect.TypeFor[time.Duration]():
		return time.Duration(v.Int()).String()
	case v.CanFloat():
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatInt(v.Int(), 10)
}

// diffSwitches compares the settings that widen the server as a whole:
// the output filter, secret files, the exec sandbox, HTTP and metrics
// listeners.
func (d *PolicyDiff) diffSwitches(o, n configs.Config) {
	d.flag("output_filter", "output_filter.disable_redaction", o.OutputFilter.DisableRedaction, n.OutputFilter.DisableRedaction)
	d.flag("output_filter", "output_filter.keep_invisible", o.OutputFilter.KeepInvisible, n.OutputFilter.KeepInvisible)
	d.list("output_filter", "output_filter.injection_markers", o.OutputFilter.InjectionMarkers, n.OutputFilter.InjectionMarkers, false)
	d.flag("secret_files", "capabilities.allow_secret_files", o.Capabilities.AllowSecretFiles, n.Capabilities.AllowSecretFiles)
	d.list("secret_files", "capabilities.secret_files", o.Capabilities.SecretFiles, n.Capabilities.SecretFiles, false)
	d.flag("exec", "exec.workspace_writable", o.Exec.WorkspaceWritable, n.Exec.WorkspaceWritable)
	d.list("exec", "exec.accept_weaker_limits", o.Exec.AcceptWeakerLimits, n.Exec.AcceptWeakerLimits, true)
	d.list("exec", "exec.interpreters", o.Exec.Interpreters, n.Exec.Interpreters, true)
	d.list("exec", "exec.commands", commandNames(o.Exec.Commands), commandNames(n.Exec.Commands), true)
	d.list("policy", "policy.client_control_args", o.Policy.ClientControlArgs, n.Policy.ClientControlArgs, true)
	d.flag("http", "http.allow_remote", o.HTTP.AllowRemote, n.HTTP.AllowRemote)
	d.list("http", "http.allowed_hosts", o.HTTP.AllowedHosts, n.HTTP.AllowedHosts, true)
	d.list("http", "http.allowed_origins", o.HTTP.AllowedOrigins, n.HTTP.AllowedOrigins, true)
	d.flag("metrics", "metrics.allow_remote", o.Metrics.AllowRemote, n.Metrics.AllowRemote)
	d.diffArguments(o.Arguments, n.Arguments)
	d.diffTaint(o.Policy.Taint, n.Policy.Taint)
	d.list("policy", "policy.private_tools", o.Policy.PrivateTools, n.Policy.PrivateTools, false)
	d.diffNetwork(o, n)
}

// flag files a switch turned on (a widening) or off (a narrowing).
func (d *PolicyDiff) flag(kind, key string, old, new bool) {
	d.add(b2i(old), b2i(new), Change{Kind: kind, Item: key, Old: strconv.FormatBool(old), New: strconv.FormatBool(new)})
}

// list compares a list of settings: with grows (a list that widens as
// it grows), an entry NEW adds is a widening and one it drops a
// narrowing; without, the other way round.
func (d *PolicyDiff) list(kind, key string, old, new []string, grows bool) {
	for _, s := range added(old, new) {
		d.add(0, rankIf(grows), Change{Kind: kind, Item: fmt.Sprintf("%s %q", key, s), Old: "absent", New: "listed"})
	}
	for _, s := range added(new, old) {
		d.add(0, rankIf(!grows), Change{Kind: kind, Item: fmt.Sprintf("%s %q", key, s), Old: "listed", New: "absent"})
	}
}

// rankIf is 1 when the change it ranks widens, -1 when it narrows.
func rankIf(widens bool) int {
	if widens {
		return 1
	}
	return -1
}

func commandNames(cs []configs.Command) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Name+" "+strings.Join(c.Argv, " "))
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func mapsKeys[V any](m map[string]V) iter.Seq[string] { return maps.Keys(m) }

func union2[V any](a, b map[string]V) map[string]V {
	out := map[string]V{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
