package lazyregexp

import (
	"sync"
	"testing"
)

func TestCompiledAtFirstUseOnly(t *testing.T) {
	r := newLazy(`[`) // does not parse: declaring it must not compile it
	if r.String() != `[` {
		t.Fatalf("String() = %q, want the source text", r.String())
	}
	defer func() {
		if recover() == nil {
			t.Fatal("first use of an invalid expression did not panic")
		}
	}()
	r.MatchString("x")
}

func TestNewCompilesAtOnceUnderTest(t *testing.T) {
	if !inTest {
		t.Fatal("a go test binary was not recognised as one")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("New of an invalid expression under test did not panic")
		}
	}()
	New(`(`)
}

func TestMatchesAsRegexp(t *testing.T) {
	r := newLazy(`^([a-z]+)_(env|file)$`)
	var wg sync.WaitGroup
	for range 8 { // concurrent first uses compile once, all see the result
		wg.Go(func() {
			if !r.MatchString("token_env") || r.MatchString("Token_env") {
				t.Error("MatchString disagrees with regexp")
			}
		})
	}
	wg.Wait()
	if got := r.FindStringSubmatch("api_file"); len(got) != 3 || got[1] != "api" || got[2] != "file" {
		t.Fatalf("FindStringSubmatch = %q", got)
	}
	if got := r.FindAllStringSubmatchIndex("a_env", -1); len(got) != 1 || got[0][0] != 0 || got[0][1] != 5 {
		t.Fatalf("FindAllStringSubmatchIndex = %v", got)
	}
	first := r.Regexp()
	if again := r.Regexp(); again != first {
		t.Fatal("Regexp() compiled twice")
	}
}
