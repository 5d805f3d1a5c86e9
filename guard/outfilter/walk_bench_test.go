package outfilter

import (
	"testing"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
)

func walkPatterns(f *Filter) []string {
	var ps []string
	for _, r := range f.rules {
		ps = append(ps, r.keywords...)
	}
	return append(ps, f.markers...)
}

func BenchmarkWalkDFA(b *testing.B) {
	f := newFilter(b)
	text := mixedText()
	d := newKeywordDFA(walkPatterns(f))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		n := 0
		d.walk(text, func(int, int32) { n++ })
	}
}

func BenchmarkWalkTrie(b *testing.B) {
	f := newFilter(b)
	text := mixedText()
	bld := ahocorasick.NewTrieBuilder()
	for _, p := range walkPatterns(f) {
		bld.AddString(p)
	}
	tr := bld.Build()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		lower := []byte(text)
		for i, c := range lower {
			lower[i] = lowerASCII(c)
		}
		n := 0
		tr.Walk(lower, func(_, _, _ int64) bool { n++; return true })
	}
}
