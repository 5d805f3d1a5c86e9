package outfilter

import (
	"regexp"
	"strings"
)

// A fixed marker ("ignore all previous instructions") catches one wording
// of an attack; an attacker rewords it ("ignore previous safety
// instructions"). A phrase class catches the form instead: a few rare
// anchor words go into the keyword automaton with the markers, and only
// around an anchor's hit does the class's regular expression run, over a
// bounded window, so text without the anchors costs nothing more. Each
// class stands for one kind of persuasion aimed at the model, not at a
// human reader:
//
//   - override: telling the model to drop its earlier instructions;
//   - privilege claim: telling the model it has been granted elevated
//     rights (a human reader's rights are not granted by a web page);
//   - authority banner: text posing as a message from the system or an
//     administrator ("SYSTEM NOTE:");
//   - tool call: asking for a named tool to be called ("call the shell
//     tool", "call fetch with url ...");
//   - decode and run: asking for an encoded payload to be decoded and
//     executed, the way past string matching on the payload itself;
//   - system prompt request: asking for the model's own instructions
//     ("print your system prompt"), or replacing them; a page that only
//     talks about system prompts is not one.
//
// Definitions (upstream tool descriptions and schemas, Options.Definition)
// get two more, which in a tool's own documentation can only steer the
// model's choice of tools:
//
//   - tool preference: "always use this tool instead of the built-in one";
//   - tool hook: "when the user asks to use the send_mail tool, first ...".
type phraseClass struct {
	name    string
	anchors []string
	// before and after bound the window around an anchor's hit that re
	// runs over: the most its matches reach either side of an anchor.
	before, after int
	// needs are words of which the window must hold one (ASCII case
	// folded) for re to run: a cheap test that spares most anchor hits in
	// code ("root", "debug") the expression.
	needs []string
	// fromNeed: every match starts with a needs word, so re runs from the
	// first one in the window on.
	fromNeed bool
	re       *regexp.Regexp
	// exclude lists words the first group must not be (the class reads
	// another tool's name there; "this" is the tool itself).
	exclude map[string]bool
	// definition classes run only on tool definitions.
	definition bool
}

// The anchors are the rarest words of each class's form (the adjective
// of a privilege claim, not "access"; "tool" after a tool call, not
// "call"), so that ordinary text, code above all, rarely runs the
// expressions.

// ident is a tool name as text writes it, quoted or not.
const ident = "[`'\"]?([a-z][a-z0-9]*(?:[_.-][a-z0-9]+)*)[`'\"]?"

var phraseClasses = []*phraseClass{
	{
		name:    "override of earlier instructions",
		anchors: []string{"ignore", "disregard", "forget", "override", "bypass"},
		before:  10, after: 120,
		needs: []string{"instruction", "rule", "directive", "guideline", "prompt", "guardrail", "constraint", "polic"},
		re: regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|the|your|of|its|these)\s+){0,3}` +
			`(?:previous|prior|above|earlier|preceding|original|existing|system|safety|security)\s+(?:[a-z]+\s+){0,2}?` +
			`(?:instructions?|rules|directives|guidelines|prompts?|guardrails|constraints|policies)\b`),
	},
	{
		name: "privilege claim",
		anchors: []string{"elevated", "unrestricted", "unlimited", "administrator", "administrative", "admin", "root",
			"superuser", "sudo", "god", "developer", "maintenance", "debug"},
		before: 100, after: 60,
		needs: []string{"you"}, fromNeed: true,
		re: regexp.MustCompile(`(?i)\byou(?:'ve|'re|\s+have|\s+are|\s+now)(?:\s+(?:now|been|just|officially|hereby|granted|given|have|are|in|running|operating|with))*\s+` +
			`(?:full\s+)?(?:and\s+)?(?:elevated|unrestricted|unlimited|administrator|administrative|admin|root|superuser|sudo|god|developer|maintenance|debug)\s+` +
			`(?:[a-z]+\s+){0,2}?(?:access|privileges?|permissions?|rights|clearance|mode)\b`),
	},
	{
		name:    "authority banner",
		anchors: []string{"note:", "notice:", "message:", "override:", "directive:", "instruction:", "instructions:", "update:"},
		before:  60, after: 0,
		needs: []string{"system", "sys", "admin", "operator", "root"},
		re: regexp.MustCompile(`(?i)(?:^|[\n"'{>\[(.!?:;]\s*|\bimportant\s+|\burgent\s+|\bcritical\s+)` +
			`(?:system|sys|admin|administrator|sysadmin|operator|root)(?:\s+(?:administrator|admin|security|operator))?\s+` +
			`(?:note|notice|message|override|directive|instructions?|update)\s*:`),
	},
	{
		name: "tool call",
		anchors: []string{"tool", "with url", "with the url", "with args", "with argument", "with parameter", "with path",
			"with command", "with input", "with data"},
		before: 90, after: 20,
		needs: []string{"call", "invok"}, fromNeed: true,
		re: regexp.MustCompile(`(?i)\b(?:call|calling|invoke|invoking)\s+(?:the\s+)?` + ident +
			`\s+(?:tool\b|with\s+(?:the\s+)?(?:url|args|arguments?|parameters?|path|command|input|data)\b)`),
		exclude: map[string]bool{"this": true, "that": true, "a": true, "any": true, "it": true},
	},
	{
		name:    "decode and run",
		anchors: []string{"decode", "base64"},
		before:  10, after: 120,
		needs: []string{"exec", "run", "eval", "pipe", "sh"},
		re: regexp.MustCompile(`(?i)\bdecode\b[^.\n]{0,60}?\b(?:and|then)\s+(?:execute|run|eval|evaluate|pipe)\b|` +
			`\bbase64\s+(?:-d|-D|--decode)\b[^|\n]{0,60}\|\s*(?:sudo\s+)?(?:ba|z|k|da)?sh\b`),
	},
	{
		name:    "system prompt request",
		anchors: []string{"prompt", "instructions"},
		before:  90, after: 20,
		needs: []string{"system", "initial", "hidden", "original", "developer"},
		re: regexp.MustCompile(`(?i)\b(?:output|print|reveal|show|repeat|dump|disclose|leak|share|display|return|send|paste|tell\s+me|give\s+me|write\s+out)\s+` +
			`(?:me\s+)?(?:your|the)\s+(?:[a-z]+\s+){0,3}?(?:system|initial|hidden|original|developer)\s+(?:prompt|instructions)\b|` +
			`\b(?:your|the)\s+(?:new|updated|real|actual)\s+system\s+prompt\s+(?:is|says|reads)\b`),
	},
	{
		name:    "tool preference",
		anchors: []string{"this tool", "this function", "instead of", "supersede", "replaces", "overrides"},
		before:  40, after: 100,
		definition: true,
		re: regexp.MustCompile(`(?i)\b(?:always|only)\s+use\s+this\s+(?:tool|function)\b[^.\n]{0,40}\binstead\b|` +
			`\binstead\s+of\s+(?:the\s+|any\s+)?(?:built-?in|default|native|standard|other|original)\b[^.\n]{0,40}\b(?:tools?|functions?)\b|` +
			`\b(?:supersedes?|overrides?|replaces?)\s+(?:any|all|the)\s+(?:built-?in|default|native|standard|other|original)\b`),
	},
	{
		name:    "tool hook",
		anchors: []string{"tool"},
		before:  140, after: 10,
		definition: true,
		re: regexp.MustCompile(`(?i)\b(?:when(?:ever)?|before|after)\s+(?:the\s+user\s+|you\s+|the\s+model\s+|the\s+agent\s+)?` +
			`(?:asks?\s+(?:you\s+)?to\s+|wants?\s+to\s+|is\s+about\s+to\s+)?(?:use|call|invoke|run|using|calling|invoking)s?\s+` +
			`(?:the\s+|any\s+|another\s+)?` + ident + `\s+tool\b`),
		exclude: map[string]bool{"this": true},
	},
}

// classesFor returns the classes a filter runs: the definition classes
// only for definitions.
func classesFor(definition bool) []*phraseClass {
	var out []*phraseClass
	for _, c := range phraseClasses {
		if !c.definition || definition {
			out = append(out, c)
		}
	}
	return out
}

// match runs c around the anchor hit s[at:end] and returns its warning,
// or "", and where in s the words it quotes are. from is where c's last
// window ended: a hit inside it was looked at already; the new end is
// returned.
func (c *phraseClass) match(s string, at, end, from int) (w string, found span, next int) {
	if at < from {
		return "", span{}, from
	}
	lo, hi := max(at-c.before, 0), min(end+c.after, len(s))
	k := firstOf(s[lo:hi], c.needs)
	if k < 0 {
		return "", span{}, hi - c.after
	}
	if c.fromNeed {
		lo += k
	}
	for _, m := range c.re.FindAllStringSubmatchIndex(s[lo:hi], -1) {
		if len(m) > 2 && m[2] >= 0 && c.exclude[strings.ToLower(s[lo+m[2]:lo+m[3]])] {
			continue
		}
		return c.name + ": " + quoteFound(s[lo+m[0]:lo+m[1]]), span{start: lo + m[0], end: lo + m[1]}, hi - c.after
	}
	return "", span{}, hi - c.after
}

// quoteFound is what a class found, as a warning names it: lower case,
// white space as single spaces, what leads up to the words dropped, at
// most 80 bytes.
func quoteFound(s string) string {
	s = strings.Join(strings.Fields(strings.ToLower(s)), " ")
	s = strings.TrimLeft(s, "\"'{>[(.!?:; ")
	if len(s) > 80 {
		s = s[:80]
	}
	return `"` + s + `"`
}

// phraseFrom is, per class, where its last window ended in one text.
type phraseFrom [16]int

// phraseAt runs the classes of anchor a around its hit s[at:end] and
// returns the first warning, with where its words are; from (nil: look at every hit) skips hits a
// class's last window covered.
func (f *Filter) phraseAt(s string, a, at, end int, from *phraseFrom) (string, span) {
	for _, ci := range f.anchorClasses[a] {
		var w string
		var found span
		if from == nil {
			w, found, _ = f.classes[ci].match(s, at, end, 0)
		} else {
			w, found, from[ci] = f.classes[ci].match(s, at, end, from[ci])
		}
		if w != "" && !f.markerIn(w) {
			return w, found
		}
	}
	return "", span{}
}

// markerIn reports whether warning w quotes one of the fixed markers,
// which is warned about by itself.
func (f *Filter) markerIn(w string) bool {
	_, found, _ := strings.Cut(w, ": ")
	for _, m := range f.markers {
		if strings.Contains(found, m) {
			return true
		}
	}
	return false
}

// firstOf returns where s first holds one of words (lower-case ASCII),
// ASCII case-insensitively, or -1; no words: 0.
func firstOf(s string, words []string) int {
	if len(words) == 0 {
		return 0
	}
	for i := range len(s) {
		for _, w := range words {
			if len(s)-i >= len(w) && lowerASCII(s[i]) == w[0] && foldedAt(s, i, w) {
				return i
			}
		}
	}
	return -1
}

// foldedAt reports whether s[i:] begins with w, ASCII case-insensitively.
func foldedAt(s string, i int, w string) bool {
	for j := range len(w) {
		if lowerASCII(s[i+j]) != w[j] {
			return false
		}
	}
	return true
}
