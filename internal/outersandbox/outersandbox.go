// Package outersandbox tells whether toolwarden itself was started inside
// another sandbox that forbids what toolwarden needs (user namespaces for
// its own sandboxes, writes outside the project), and what to change. Its
// one use is in error messages: a chain of low-level refusals from runsc
// and bubblewrap never says that the cause is the sandbox around the
// server, nor which setting lifts it.
package outersandbox

import (
	"errors"
	"io/fs"
	"syscall"
)

// An Outer is a known sandbox around the server.
type Outer struct {
	// Name says which sandbox, and how it was recognised.
	Name string
	// Nested says what lets toolwarden's own sandboxes run inside it.
	Nested string
	// Write says what lets toolwarden write to dir, which the config key
	// setting chose.
	Write func(dir, setting string) string
}

// srt is Anthropic's sandbox runtime, which VS Code starts local stdio
// servers in when their entry says "sandboxEnabled": true. It sets
// SANDBOX_RUNTIME=1 in the sandboxed program's environment, forbids new
// user namespaces (seccomp) unless allowNestedUserNamespaces is set, and
// lets the program write only below filesystem.allowWrite. VS Code writes
// the server entry's "sandbox" object into the settings file it hands
// srt, so the same keys work there.
var srt = Outer{
	Name: `Anthropic's sandbox runtime (srt; SANDBOX_RUNTIME=1 is set), as VS Code starts a server whose mcp.json entry says "sandboxEnabled": true`,
	Nested: `it forbids the user namespaces every sandbox backend needs: to offer run_script and the other exec tools, ` +
		`allow them in the outer sandbox's settings ("allowNestedUserNamespaces": true in srt's settings file, or in this ` +
		`server's "sandbox" object in VS Code's mcp.json), or turn "sandboxEnabled" off for this server`,
	Write: func(dir, setting string) string {
		return `it lets the server write only below its "filesystem.allowWrite" paths: add "` + dir +
			`" there (VS Code's mcp.json: this server's "sandbox": {"filesystem": {"allowWrite": [...]}}), ` +
			`or set ` + setting + ` to a place it allows`
	},
}

// Detect reports the sandbox around the server, from its environment.
func Detect(getenv func(string) string) (Outer, bool) {
	if getenv("SANDBOX_RUNTIME") == "1" {
		return srt, true
	}
	return Outer{}, false
}

// WriteRefused reports whether err is the kind of refusal an outer
// sandbox's write rules give: a read-only file system or no permission.
func WriteRefused(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission)
}
