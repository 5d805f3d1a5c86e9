package guard

import (
	"iter"
	"path"
	"slices"
	"strings"
)

// Chains whose every step is harmless alone, and whose results hold no
// secret for the output filter to redact (taint.go), are caught by what
// the calls' arguments name, not by what their tools are called: the
// guard cannot see what an upstream's get_env or run_command does, but it
// can see what a call asks for. Three classes of argument mark a session,
// each as a taint under policy.taint (after the call ran):
//
//   - a credential held in the environment: an argument whose whole value
//     is the name of an environment variable that by convention holds a
//     secret (AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, DATABASE_URL), or a
//     $NAME / ${NAME} reference to one anywhere in a string. The value the
//     tool returns need not look like a secret (a connection string);
//   - an autostart location: a path under which the system runs what is
//     written there on its own (crontabs, systemd units, shell start-up
//     files, authorized_keys, git hooks, launch agents). Writing one is
//     persistence; reading one is reconnaissance;
//   - a script staged for a later call: a call that gives a path together
//     with content starting "#!" (or a path with a script's extension),
//     which a later call in the session then names (runs it, most often).
//     This one taints only the later call, not the session: writing a
//     script is ordinary, running what the session itself just wrote is
//     the step that sends the script's effects out.
//
// A tainted session's calls that send out then ask a human (approve, the
// default) or are refused (refuse), as after a redacted secret. Benign
// chains stay free: reading project files and writing others names none
// of these; a variable's name in prose ("set GITHUB_TOKEN first") is not
// a whole value; a script is asked about only when the session runs it.

// credWords are the words (between underscores) of an environment
// variable's name that say it holds a secret.
var credWords = map[string]bool{
	"TOKEN": true, "TOKENS": true, "SECRET": true, "SECRETS": true, "PASSWORD": true, "PASSWD": true,
	"PASSPHRASE": true, "APIKEY": true, "CREDENTIAL": true, "CREDENTIALS": true, "PRIVATE": true,
	"DSN": true, "COOKIE": true, "AUTH": true, "PAT": true,
}

// storeWords name a data store whose *_URL or *_URI is a connection
// string, which carries its password by convention (DATABASE_URL).
var storeWords = map[string]bool{
	"DATABASE": true, "DB": true, "REDIS": true, "MONGO": true, "MONGODB": true, "POSTGRES": true,
	"POSTGRESQL": true, "PG": true, "MYSQL": true, "AMQP": true, "RABBITMQ": true, "BROKER": true,
	"CONNECTION": true, "SQL": true, "ELASTICSEARCH": true, "KAFKA": true, "SMTP": true,
}

// keyTails are the words after KEY that still name the key itself.
var keyTails = map[string]bool{"ID": true, "FILE": true, "PATH": true, "DATA": true, "PEM": true, "B64": true, "BASE64": true}

// secretSuffix reports whether w is one word ending in a credential's
// (PGPASSWORD, GHTOKEN).
func secretSuffix(w string) bool {
	for _, s := range []string{"PASSWORD", "PASSWD", "TOKEN", "SECRET"} {
		if strings.HasSuffix(w, s) {
			return true
		}
	}
	return false
}

// envName reports whether s is an environment variable's name as written
// in an argument: upper case, digits and single underscores, three or
// more characters.
func envName(s string) bool {
	if len(s) < 3 || s[0] < 'A' || s[0] > 'Z' || s[len(s)-1] == '_' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_' && s[i-1] != '_':
		default:
			return false
		}
	}
	return true
}

// envRefs are the names of the $NAME and ${NAME} references in s.
func envRefs(s string) []string {
	var out []string
	for i := strings.IndexByte(s, '$'); i >= 0; {
		j := i + 1
		if j < len(s) && s[j] == '{' {
			j++
		}
		k := j
		for k < len(s) && (s[k] >= 'A' && s[k] <= 'Z' || s[k] >= '0' && s[k] <= '9' || s[k] == '_') {
			k++
		}
		if k > j {
			out = append(out, s[j:k])
		}
		next := strings.IndexByte(s[k:], '$')
		if next < 0 {
			break
		}
		i = k + next
	}
	return out
}

// credentialVar reports whether name is one of an environment variable
// that holds a secret by convention.
func credentialVar(name string) bool {
	if !envName(name) {
		return false
	}
	words := strings.Split(name, "_")
	store := false
	for i, w := range words {
		switch {
		case credWords[w] || secretSuffix(w):
			return true
		// A KEY after another word, last or before what names it:
		// API_KEY, AWS_ACCESS_KEY_ID, SSH_KEY_FILE; a lone KEY or a
		// SORT_KEY_ORDER says nothing.
		case w == "KEY" && i > 0 && (i == len(words)-1 || keyTails[words[i+1]]):
			return true
		case storeWords[w]:
			store = true
		case store && (w == "URL" || w == "URI" || w == "STRING"):
			return true
		}
	}
	return false
}

// autostart are the places whose contents the system runs on its own.
// Absolute ones are matched as prefixes of a cleaned path; the others as
// path segments anywhere in it (a home directory is spelt many ways).
var (
	autostartPrefixes = []string{
		"/etc/cron", "/var/spool/cron/", "/var/spool/at/", "/etc/anacrontab", "/etc/at.",
		"/etc/systemd/", "/lib/systemd/", "/usr/lib/systemd/", "/etc/init.d/", "/etc/init/",
		"/etc/rc.local", "/etc/rc.d/", "/etc/profile", "/etc/bash.bashrc", "/etc/zsh/",
		"/etc/environment", "/etc/ld.so.preload", "/etc/sudoers", "/etc/xdg/autostart/",
		"/etc/update-motd.d/", "/Library/LaunchAgents/", "/Library/LaunchDaemons/",
	}
	autostartSegments = []string{
		"/.bashrc", "/.bash_profile", "/.bash_login", "/.bash_logout", "/.profile", "/.zshrc",
		"/.zshenv", "/.zprofile", "/.zlogin", "/.config/fish/config.fish", "/.config/autostart/",
		"/.config/systemd/", "/.ssh/authorized_keys", "/.ssh/rc", "/.git/hooks/",
		"/Library/LaunchAgents/", "/.xinitrc", "/.xprofile", "/.pam_environment",
	}
)

// autostartSegs are autostartSegments without and with a final slash.
var autostartSegs = func() [][2]string {
	var out [][2]string
	for _, seg := range autostartSegments {
		dir := strings.TrimSuffix(seg, "/")
		out = append(out, [2]string{dir, dir + "/"})
	}
	return out
}()

// autostartPath reports whether p names an autostart location.
func autostartPath(p string) bool {
	if p == "" || !strings.ContainsRune(p, '/') {
		return false
	}
	if strings.HasPrefix(p, "~") || strings.HasPrefix(p, "$HOME") || strings.HasPrefix(p, "${HOME}") {
		p = "/home/u" + p[strings.IndexByte(p, '/'):]
	} else if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	p = path.Clean(p)
	// A directory named without its final slash is the directory; a
	// file segment must end the path or name a directory of it
	// (.bashrc, not .bashrc.bak).
	for _, pre := range autostartPrefixes {
		if strings.HasPrefix(p, pre) || p == strings.TrimSuffix(pre, "/") {
			return true
		}
	}
	for _, seg := range autostartSegs {
		if strings.HasSuffix(p, seg[0]) || strings.Contains(p, seg[1]) {
			return true
		}
	}
	return false
}

// pathTokens are the words of s a shell or a URL would see as paths:
// runs between spaces, quotes, redirections and separators.
func pathTokens(s string) iter.Seq[string] {
	return strings.FieldsFuncSeq(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '"' || r == '\'' || r == '`' ||
			r == ';' || r == '|' || r == '&' || r == '<' || r == '>' || r == '(' || r == ')' || r == '=' || r == ',' || r == '@'
	})
}

// scriptExts are the extensions of files an interpreter runs.
var scriptExts = []string{".sh", ".bash", ".zsh", ".py", ".pl", ".rb", ".js", ".mjs", ".ps1", ".bat", ".cmd", ".command", ".php", ".lua"}

// flowOf is what call's arguments name, for the session's taint: why the
// session is tainted from now on ("" when nothing), and the scripts it
// stages (paths of files given content to run).
func flowOf(args any) (why string, staged []string) {
	obj, _ := args.(map[string]any)
	var buf [8]string // most calls have a few strings: no allocation
	strs := collect(args, buf[:0], 0)
	slices.Sort(strs) // the first class found names the taint: the same every time
	for _, s := range strs {
		if credentialVar(strings.TrimSpace(s)) {
			return "it read " + strings.TrimSpace(s) + ", an environment variable holding a credential", nil
		}
		for _, name := range envRefs(s) {
			if credentialVar(name) {
				return "it referred to $" + name + ", an environment variable holding a credential", nil
			}
		}
		if !strings.ContainsRune(s, '/') {
			continue
		}
		for tok := range pathTokens(s) {
			if autostartPath(tok) {
				return "it named " + tok + ", a place the system runs on its own", nil
			}
		}
	}
	return "", stagedScripts(obj)
}

// stagedScripts are the paths obj (a call's top-level arguments) gives
// content to run: a path-like string beside a string starting "#!", or a
// path with a script's extension beside any other multi-line or long
// string.
func stagedScripts(obj map[string]any) []string {
	var paths []string
	shebang, content := false, false
	for _, v := range obj {
		s, ok := v.(string)
		if !ok {
			continue
		}
		t := strings.TrimSpace(s)
		switch {
		case strings.HasPrefix(t, "#!"):
			shebang = true
		case looksLikePath(t):
			paths = append(paths, t)
		case strings.Contains(t, "\n") || len(t) > 40:
			content = true
		}
	}
	var out []string
	for _, p := range paths {
		if shebang || (content && slices.ContainsFunc(scriptExts, func(e string) bool { return strings.HasSuffix(p, e) })) {
			out = append(out, p)
		}
	}
	return out
}

// looksLikePath reports whether s is one path, nothing else.
func looksLikePath(s string) bool {
	return s != "" && len(s) < 4096 && strings.ContainsAny(s, "/.") && !strings.ContainsAny(s, " \t\n\"'") && path.Base(s) != "."
}

// collect appends every string in v (values and member names) to out.
func collect(v any, out []string, depth int) []string {
	if depth > 32 {
		return out
	}
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case map[string]any:
		for k, e := range x {
			out = collect(e, append(out, k), depth+1)
		}
	case []any:
		for _, e := range x {
			out = collect(e, out, depth+1)
		}
	}
	return out
}

// runsStaged is the script staged earlier in the session that args name
// ("" when none), unless args stage that same path again (an edit).
func runsStaged(args any, staged []string) string {
	if len(staged) == 0 {
		return ""
	}
	obj, _ := args.(map[string]any)
	again := stagedScripts(obj)
	strs := collect(args, nil, 0)
	for _, p := range staged {
		if slices.Contains(again, p) {
			continue
		}
		for _, s := range strs {
			for tok := range pathTokens(s) {
				if tok == p || path.Clean(tok) == path.Clean(p) || (path.IsAbs(p) && strings.HasSuffix(tok, p)) {
					return p
				}
			}
		}
	}
	return ""
}
