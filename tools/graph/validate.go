package graph

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/toolwarden/toolwarden/internal/artifactkey"
	"github.com/toolwarden/toolwarden/internal/lazyregexp"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// Status is a task's state.
type Status string

// The task statuses; a new task is Pending.
const (
	Pending    Status = "Pending"
	InProgress Status = "InProgress"
	Completed  Status = "Completed"
	Failed     Status = "Failed"
)

var statuses = []Status{Pending, InProgress, Completed, Failed}

// Bounds on free text.
const (
	MaxDescription = 1000
	MaxName        = 200
	maxArtifactKey = 255
)

const uuidExample = "0b6d3c7e-8f52-4a1e-9a59-3c1f2a4b5d6e"

// checkID accepts only the canonical form of a UUID: 36 characters,
// lower-case, hyphenated. uuid.Parse also accepts braces, "urn:uuid:", upper
// case and 32 bare hex digits; those are refused, not rewritten, so that one
// node has one spelling.
func checkID(arg, s string) error {
	u, err := uuid.Parse(s)
	switch {
	case err != nil || len(s) != 36:
		return toolerr.New(toolerr.InvalidUUID, fmt.Sprintf("Pass the ID exactly as a graph tool returned it, e.g. %q.", uuidExample),
			"%s %s is not a UUID", arg, toolerr.Quote(s)).WithRule("graph.uuid")
	case u.String() != s:
		return toolerr.New(toolerr.InvalidUUID, fmt.Sprintf("Write it in canonical form: %q.", u.String()),
			"%s %s is not in canonical (lower-case, hyphenated) form", arg, toolerr.Quote(s)).WithRule("graph.uuid")
	case u == uuid.Nil:
		return toolerr.New(toolerr.InvalidUUID, "Pass the ID of an existing node.", "%s is the nil UUID", arg).WithRule("graph.uuid")
	}
	return nil
}

// checkStatus accepts the four statuses, spelled exactly.
func checkStatus(s string) (Status, error) {
	for _, st := range statuses {
		if string(st) == s {
			return st, nil
		}
	}
	return "", toolerr.New(toolerr.InvalidEnum, "Use one of Pending, InProgress, Completed, Failed (exact spelling).",
		"status %s is not a task status", toolerr.Quote(s)).WithRule("graph.status")
}

// checkText bounds free text: valid UTF-8, at most max characters, no
// control characters (newline and tab are allowed where multiline is) and
// no bidirectional-override characters, which can make text read
// differently from what it holds.
func checkText(arg, s string, max int, multiline, required bool) error {
	bad := func(format string, args ...any) error {
		return toolerr.New(toolerr.InvalidText, fmt.Sprintf("Write plain text of at most %d characters.", max),
			arg+" "+format, args...).WithRule("graph.text")
	}
	n := utf8.RuneCountInString(s)
	switch {
	case !utf8.ValidString(s):
		return bad("is not valid UTF-8")
	case required && strings.TrimSpace(s) == "":
		return bad("is empty")
	case n > max:
		return bad("is %d characters long; the limit is %d", n, max)
	}
	for _, r := range s {
		if multiline && (r == '\n' || r == '\t') {
			continue
		}
		if unicode.IsControl(r) || isBidiControl(r) {
			return bad("contains the control character %U", r)
		}
	}
	return nil
}

func isBidiControl(r rune) bool {
	return r == 0x061C || r == 0x200E || r == 0x200F || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// agentID is the documented agent ID form.
var agentID = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func checkAgentID(s string) error {
	if !agentID.MatchString(s) {
		return toolerr.New(toolerr.InvalidArgument,
			`Use 1-64 characters: letters, digits, ".", "_" or "-", starting with a letter or digit, e.g. "coder-1".`,
			"agent_id %s is not a valid agent ID", toolerr.Quote(s)).WithRule("graph.agent_id")
	}
	return nil
}

// checkArtifactKey accepts the keys the artifact tools build for taskID:
// tasks/<task_id>/artifacts/<name>, parsed by the artifact tools' own
// rules, for this same task.
func checkArtifactKey(key, taskID string) error {
	keyTask, _, err := artifactkey.Parse(key)
	if err == nil && keyTask == taskID && len(key) <= maxArtifactKey {
		return nil
	}
	reason := "belongs to another task"
	switch {
	case err != nil:
		reason = toolerr.As(err).Message
	case len(key) > maxArtifactKey:
		reason = fmt.Sprintf("is longer than %d bytes", maxArtifactKey)
	}
	return toolerr.New(toolerr.InvalidArgument,
		"Pass the key exactly as store_artifact or list_artifacts returned it for this task: tasks/<task_id>/artifacts/<name>.",
		"artifact_key %s: %s", toolerr.Quote(key), reason).WithRule("graph.artifact_key")
}
