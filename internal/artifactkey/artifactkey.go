// Package artifactkey is the naming of task artifacts: the object key
// tasks/<task uuid>/artifacts/<name> and the resource URI
// artifact://tasks/<task uuid>/<name>, built from checked parts and parsed
// back without cleaning. The artifact tools store under these keys and the
// graph tools link them to tasks; neither imports the other for them.
package artifactkey

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// Limits on names and keys. MaxNameBytes is NAME_MAX; MaxKeyBytes is S3's
// own limit on a key.
const (
	MaxNameBytes = 255
	MaxKeyBytes  = 1024
)

// URIScheme starts the MCP resource URI of an artifact:
// artifact://tasks/<task uuid>/<name>.
const URIScheme = "artifact://"

const (
	nameHint = `Use a plain file name: letters, digits and . _ - + = , @ ~ ( ), starting with a letter, digit or "_", at most 255 bytes, e.g. "report.md".`
	keyHint  = `Pass task_id and name instead, or a key exactly as store_artifact or list_artifacts returned it: tasks/<task uuid>/artifacts/<name>.`
	uriHint  = "Use a URI exactly as resources/list or store_artifact returned it: artifact://tasks/<task uuid>/<name>."
)

// Key is the object key of an artifact. It is the only way keys are made:
// taskID and name must have passed TaskID and CheckName.
func Key(taskID, name string) string { return TaskPrefix(taskID) + name }

// TaskPrefix is the key prefix of a task's artifacts.
func TaskPrefix(taskID string) string { return "tasks/" + taskID + "/artifacts/" }

// URI is the MCP resource URI of an artifact.
func URI(taskID, name string) string { return URIScheme + "tasks/" + taskID + "/" + name }

// TaskID checks that s is a task UUID in canonical form: 36 characters,
// lower-case, hyphenated. Other spellings of a UUID (upper case, braces,
// urn:uuid:) are refused rather than rewritten, so that one task has one key
// prefix.
func TaskID(s string) (string, error) {
	u, err := uuid.Parse(s)
	switch {
	case len(s) != 36 || err != nil:
		return "", toolerr.New(toolerr.InvalidArgument, `Pass the task's UUID as returned by the graph tools, e.g. "0b6d3c7e-8f52-4a1e-9a59-3c1f2a4b5d6e".`,
			"task_id %s is not a UUID", toolerr.Quote(s)).WithRule("artifacts.task_id")
	case u.String() != s:
		return "", toolerr.New(toolerr.InvalidArgument, fmt.Sprintf("Write it in canonical form: %q.", u.String()),
			"task_id %s is not in canonical (lower-case, hyphenated) form", toolerr.Quote(s)).WithRule("artifacts.task_id")
	case u == uuid.Nil:
		return "", toolerr.New(toolerr.InvalidArgument, "Pass the UUID of a real task.",
			"task_id is the nil UUID").WithRule("artifacts.task_id")
	}
	return s, nil
}

// CheckName checks that name is a plain file name an artifact may have. The
// alphabet is a small ASCII allowlist, so that no path separator, encoded
// byte, control or invisible character, or Unicode look-alike of "/" or "."
// can reach a key or a resource URI.
func CheckName(name string) error {
	bad := func(format string, args ...any) error {
		return toolerr.New(toolerr.InvalidArgument, nameHint+suggestion(name),
			"artifact name "+format, args...).WithRule("artifacts.name")
	}
	switch {
	case name == "":
		return bad("is empty")
	case len(name) > MaxNameBytes:
		return bad("is %d bytes long; the limit is %d", len(name), MaxNameBytes)
	case !utf8.ValidString(name):
		return bad("is not valid UTF-8")
	case name[0] == '.' || name[0] == '-':
		return bad("%s starts with %q", toolerr.Quote(name), name[0])
	case strings.Contains(name, ".."):
		return bad(`%s contains ".."`, toolerr.Quote(name))
	}
	for _, r := range name {
		if !nameRune(r) {
			return bad("%s contains %s, which names may not hold", toolerr.Quote(name), describeRune(r))
		}
	}
	return nil
}

func nameRune(r rune) bool {
	return r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		strings.ContainsRune("._-+=,@~()", r))
}

func describeRune(r rune) string {
	switch r {
	case '/', '\\':
		return fmt.Sprintf("the path separator %q", r)
	case '%':
		return `"%" (names are never URL-encoded)`
	}
	if r < utf8.RuneSelf && r > ' ' && r != 0x7f {
		return fmt.Sprintf("%q", r)
	}
	return fmt.Sprintf("the character %U", r)
}

// suggestion proposes a valid name close to name, for the hint.
func suggestion(name string) string {
	var b strings.Builder
	for _, r := range name {
		if b.Len() >= 64 {
			break
		}
		if nameRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	for strings.Contains(s, "..") {
		s = strings.ReplaceAll(s, "..", ".")
	}
	s = strings.TrimLeft(s, ".-")
	if s == "" || CheckName(s) != nil {
		return ""
	}
	return fmt.Sprintf(" For example %q.", s)
}

// Parse parses an object key back into its task and name. Only a key
// that Key would build from a valid task and name is accepted; it is parsed,
// never cleaned, so "tasks/<id>/artifacts/../x" or a URL-encoded key is
// refused before any request.
func Parse(key string) (taskID, name string, err error) {
	if err := checkRaw("key", key, keyHint); err != nil {
		return "", "", err
	}
	parts := strings.Split(key, "/")
	if len(parts) != 4 || parts[0] != "tasks" || parts[2] != "artifacts" {
		return "", "", toolerr.New(toolerr.InvalidArgument, keyHint,
			"key %s is not of the form tasks/<task uuid>/artifacts/<name>", toolerr.Quote(key)).WithRule("artifacts.key")
	}
	return Check(parts[1], parts[3])
}

// ParseURI parses a resource URI, artifact://tasks/<task uuid>/<name>,
// with the same rules as Parse.
func ParseURI(uri string) (taskID, name string, err error) {
	if err := checkRaw("resource URI", uri, uriHint); err != nil {
		return "", "", err
	}
	rest, ok := strings.CutPrefix(uri, URIScheme+"tasks/")
	parts := strings.Split(rest, "/")
	if !ok || len(parts) != 2 {
		return "", "", toolerr.New(toolerr.InvalidArgument, uriHint,
			"resource URI %s is not of the form artifact://tasks/<task uuid>/<name>", toolerr.Quote(uri)).WithRule("artifacts.uri")
	}
	return Check(parts[0], parts[1])
}

// Check checks a task ID and an artifact name, as Parse and ParseURI do
// with the parts they split, and returns them.
func Check(id, name string) (string, string, error) {
	if _, err := TaskID(id); err != nil {
		return "", "", err
	}
	if err := CheckName(name); err != nil {
		return "", "", err
	}
	return id, name, nil
}

// checkRaw refuses over-long, non-UTF-8, URL-encoded or absolute references
// with a message of their own, before they are split.
func checkRaw(what, s, hint string) error {
	var reason string
	switch {
	case len(s) > MaxKeyBytes:
		reason = fmt.Sprintf("is %d bytes long; the limit is %d", len(s), MaxKeyBytes)
	case !utf8.ValidString(s):
		reason = "is not valid UTF-8"
	case strings.HasPrefix(s, "/"):
		reason = `starts with "/"`
	case strings.Contains(s, "%"):
		reason = "is URL-encoded; pass it exactly as it was returned"
	default:
		return nil
	}
	return toolerr.New(toolerr.InvalidArgument, hint, "%s %s", what, reason).WithRule("artifacts.key")
}
