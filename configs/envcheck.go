package configs

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
)

// otherEnv are the TOOLWARDEN_* variables toolwarden reads that are not
// config keys: the config file's path, and the bearer tokens that never go
// in a file (httpserve.TokenEnv, bridge.ServerTokenEnv).
var otherEnv = []string{EnvPrefix + "_CONFIG", EnvPrefix + "_HTTP_TOKEN", EnvPrefix + "_SERVER_TOKEN"}

// testEnvPrefix is reserved for the test suite's own variables
// (internal/testenv), which the servers it starts inherit.
const testEnvPrefix = EnvPrefix + "_TEST_"

// unknownEnv returns a warning for every TOOLWARDEN_* variable of environ
// that sets nothing: no config key (keys are viper's, as Load reads them),
// not one of otherEnv, and not a variable the config names as holding a
// secret (a value such as cluster.secret_env: TOOLWARDEN_CLUSTER_SECRET).
// An unknown key in a file is an error; the environment is shared with
// other programs and scripts, so a stray variable is warned about, with
// the nearest variable that would have set a key.
func unknownEnv(environ, keys []string, cfg *Config) []string {
	known := make([]string, 0, len(keys)+len(otherEnv))
	for _, k := range keys {
		known = append(known, EnvName(k))
	}
	known = append(known, otherEnv...)
	named := configStrings(reflect.ValueOf(cfg).Elem(), map[string]bool{})
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix+"_") || strings.HasPrefix(name, testEnvPrefix) ||
			slices.Contains(known, name) || named[name] {
			continue
		}
		msg := fmt.Sprintf("env %s sets no config key and is ignored", name)
		if near := nearest(name, known); near != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", near)
		}
		out = append(out, msg)
	}
	slices.Sort(out)
	return out
}

// nearest returns the name of known closest to name, if it is close
// enough to be a misspelling of it: a few edits after the prefix, fewer
// for short names (TOOLWARDEN_FOO is no misspelling of TOOLWARDEN_TOOLS).
func nearest(name string, known []string) string {
	short := strings.TrimPrefix(name, EnvPrefix+"_")
	best, bestDist := "", len(short)/4+1
	for _, k := range known {
		d := levenshtein.ComputeDistance(short, strings.TrimPrefix(k, EnvPrefix+"_"))
		if d < bestDist || (d == bestDist && best != "" && k < best) {
			best, bestDist = k, d
		}
	}
	return best
}

// configStrings collects every string value of v (struct fields, slices,
// map values), into seen.
func configStrings(v reflect.Value, seen map[string]bool) map[string]bool {
	switch v.Kind() {
	case reflect.String:
		seen[v.String()] = true
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				configStrings(v.Field(i), seen)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			configStrings(v.Index(i), seen)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			configStrings(v.MapIndex(k), seen)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			configStrings(v.Elem(), seen)
		}
	}
	return seen
}
