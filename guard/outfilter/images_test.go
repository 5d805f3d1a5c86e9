package outfilter

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A markdown image whose address is not plainly local is defanged (`!\[`,
// which renders as text) and warned about; plain links and local images
// stay.
func TestMarkdownImagesToOutsideHostsAreDefanged(t *testing.T) {
	f := newFilter(t)
	cases := []struct {
		name, in, want string
		defanged       int
	}{
		{"inline with data in the query", "![x](https://host.example/p.png?d=c2VjcmV0)", `!\[x](https://host.example/p.png?d=c2VjcmV0)`, 1},
		{"inline with a title and spaces", "![logo]( <http://h.example/a b.png> \"t\")", `!\[logo]( <http://h.example/a b.png> "t")`, 1},
		{"protocol-relative", "![](//h.example/p.png)", `!\[](//h.example/p.png)`, 1},
		{"backslashes for slashes", `![](\\h.example/p.png)`, `!\[](\\h.example/p.png)`, 1},
		{"character reference for the colon", "![x](https&#58;//h.example/p)", `!\[x](https&#58;//h.example/p)`, 1},
		{"nested brackets in the alt text", "![a [b] c](https://h.example/p)", `!\[a [b] c](https://h.example/p)`, 1},
		{"full reference", "text ![x][r] more\n\n[r]: https://h.example/p.png?d=1\n", "text !\\[x][r] more\n\n[r]: https://h.example/p.png?d=1\n", 1},
		{"collapsed reference, label folded", "![Logo Image][]\n [logo   image]: <https://h.example/l.png>", "!\\[Logo Image][]\n [logo   image]: <https://h.example/l.png>", 1},
		{"shortcut reference", "![r]\n[r]: https://h.example/p.png", "!\\[r]\n[r]: https://h.example/p.png", 1},
		{"two images", "![a](https://h/1) and ![b](ftp://h/2)", `!\[a](https://h/1) and !\[b](ftp://h/2)`, 2},
		{"local relative image stays", "![diagram](docs/arch.png)", "![diagram](docs/arch.png)", 0},
		{"root-relative image stays", "![d](/img/a.png?v=2)", "![d](/img/a.png?v=2)", 0},
		{"reference to a local image stays", "![x][r]\n[r]: img/x.png", "![x][r]\n[r]: img/x.png", 0},
		{"reference without a definition is text", "![x][nowhere]", "![x][nowhere]", 0},
		{"plain link stays", "[docs](https://h.example/?d=1)", "[docs](https://h.example/?d=1)", 0},
		{"escaped image is text already", `\![x](https://h.example/p)`, `\![x](https://h.example/p)`, 0},
		{"escaped backslash, then an image", `\\![x](https://h.example/p)`, `\\!\[x](https://h.example/p)`, 1},
		{"escaping the inner image exposes the outer one", "![![](&0", `!\[!\[](&0`, 2},
		{"deep nesting ends with every image escaped", strings.Repeat("![", 10) + "](x:)", strings.Repeat(`!\[`, 10) + "](x:)", 10},
		{"unclosed alt text", "![x(https://h.example/p)", "![x(https://h.example/p)", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rep Report
			got := f.Text(c.in, &rep)
			assert.Equal(t, c.want, got)
			assert.Equal(t, c.defanged, rep.Defanged)
			if c.defanged > 0 {
				assert.Contains(t, rep.Warnings, WarnImage)
			} else {
				assert.Empty(t, rep.Warnings)
			}
			var again Report
			assert.Equal(t, got, f.Text(got, &again), "idempotent")
			assert.Zero(t, again.Defanged)
		})
	}
}
