package configs

import (
	"net/url"
	"slices"
	"time"

	"github.com/toolwarden/toolwarden/internal/lazyregexp"
)

// graphSchemes are the URI schemes of the Neo4j Go driver.
var graphSchemes = []string{"bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc"}

var (
	databaseName = lazyregexp.New(`^[A-Za-z][A-Za-z0-9.-]{2,62}$`)
)

func (g Graph) validate(add func(string, string, ...any)) {
	durationIn(add, "graph.connect_timeout", g.ConnectTimeout, time.Minute)
	durationIn(add, "graph.query_timeout", g.QueryTimeout, 10*time.Minute)
	durationIn(add, "graph.max_retry_time", g.MaxRetryTime, 10*time.Minute)
	positive(add, "graph.max_connections", int64(g.MaxConnections))
	positive(add, "graph.max_list_results", int64(g.MaxListResults))
	if !databaseName.MatchString(g.Database) {
		add("graph.database", "%q is not a Neo4j database name (3-63 letters, digits, dots or dashes, starting with a letter)", g.Database)
	}
	if g.URI == "" {
		return
	}
	u, err := url.Parse(g.URI)
	switch {
	case err != nil:
		add("graph.uri", "%q is not a URI: %v", g.URI, err)
	case !slices.Contains(graphSchemes, u.Scheme):
		add("graph.uri", "scheme %q is not one of %v", u.Scheme, graphSchemes)
	case u.User != nil:
		add("graph.uri", "must not hold credentials; set graph.username and graph.password_env")
	case u.Hostname() == "":
		add("graph.uri", "%q names no host", g.URI)
	case u.Path != "" && u.Path != "/":
		add("graph.uri", "%q must have no path; name the database in graph.database", g.URI)
	}
	if g.Username == "" {
		add("graph.username", "must be set when graph.uri is")
	}
	if !envVarName.MatchString(g.PasswordEnv) && g.PasswordFile == "" && g.PasswordVault == "" {
		// The value is not echoed: it may be a password put here by mistake.
		add("graph.password_env", "must name the environment variable holding the password (letters, digits and _, e.g. NEO4J_PASSWORD), never the password itself")
	}
	if (g.ReadUsername == "") == g.readPasswordRef().Set() {
		add("graph.read_username", "graph.read_username and graph.read_password_env are set together or not at all")
	} else if g.ReadPasswordEnv != "" && !envVarName.MatchString(g.ReadPasswordEnv) {
		add("graph.read_password_env", "must name the environment variable holding the password (letters, digits and _), never the password itself")
	}
}
