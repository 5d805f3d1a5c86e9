package jsonenc

import (
	"encoding/json"
	"math"
	"testing"
)

func TestAppendStringIsJSONMarshal(t *testing.T) {
	for _, s := range []string{"", "plain", `quo"te`, `back\slash`, "<a&b>", "tab\tnew\nline", "\u2028", "é", "\xff\xfe", "\x00"} {
		want, _ := json.Marshal(s)
		if got := string(AppendString(nil, s)); got != string(want) {
			t.Errorf("AppendString(%q) = %s, json.Marshal gives %s", s, got, want)
		}
	}
}

func TestAppendFloatIsJSONMarshal(t *testing.T) {
	for _, f := range []float64{0, 1, -1, 0.125, 1e-7, 1e-6, 123456789, 1e20, 1e21, 1.5e-9, -2.5e22, math.SmallestNonzeroFloat64, math.MaxFloat64} {
		want, _ := json.Marshal(f)
		if got := string(AppendFloat(nil, f)); got != string(want) {
			t.Errorf("AppendFloat(%v) = %s, json.Marshal gives %s", f, got, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := string(AppendFloat(nil, f)); got != "0" {
			t.Errorf("AppendFloat(%v) = %s, want 0", f, got)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("hello <world> & \"friends\"\n")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := string(AppendString(nil, s)); got != string(want) {
			t.Fatalf("AppendString(%q) = %s, json.Marshal gives %s", s, got, want)
		}
	})
}
