# shellcheck shell=bash
# neo4j: a real Neo4j Community 5.26 server, embedded in the small Java
# launcher scripts/neo4j/Main.java (Neo4j is not packaged for Debian).
# Sourced by scripts/services, which sets ROOT and SERVICES_DIR.
#
# Bolt listens on 127.0.0.1:${TOOLWARDEN_NEO4J_PORT}, or by default on the
# first free port from 17687 (`scripts/services env` prints it), authentication
# on, user neo4j with a password generated once into
# $SERVICES_DIR/neo4j/password.env (mode 0600). Data and logs live in
# $SERVICES_DIR/neo4j/home. The launcher's class path (resolved by Maven
# from Maven Central into ~/.m2) and its compiled class go to
# ${TOOLWARDEN_CACHE:-$ROOT/.cache}/neo4j-launcher and are rebuilt only
# when scripts/neo4j changes.

NEO4J_STATE="$SERVICES_DIR/neo4j"
NEO4J_BUILD="${TOOLWARDEN_CACHE:-$ROOT/.cache}/neo4j-launcher"

neo4j_port() {
	if [ -s "$NEO4J_STATE/port" ] && neo4j_status; then
		cat "$NEO4J_STATE/port"
	else
		echo "${TOOLWARDEN_NEO4J_PORT:-17687}"
	fi
}

# neo4j_build resolves the class path and compiles the launcher, unless
# the sources are unchanged and every jar is still in the Maven cache.
neo4j_build() {
	local src="$ROOT/scripts/neo4j" stamp
	stamp=$(cat "$src/pom.xml" "$src/Main.java" | sha256sum | cut -d' ' -f1)
	if [ "$(cat "$NEO4J_BUILD/stamp" 2>/dev/null)" = "$stamp" ] && neo4j_jars_present; then
		return 0
	fi
	command -v mvn >/dev/null && command -v javac >/dev/null || {
		echo "neo4j: needs Maven and a JDK 17 (apt-get install maven openjdk-17-jdk-headless)" >&2
		return 1
	}
	echo "neo4j: resolving Neo4j from Maven Central (the first run downloads about 150 MB)" >&2
	mkdir -p "$NEO4J_BUILD"
	rm -rf "$NEO4J_BUILD/classes" "$NEO4J_BUILD/stamp"
	local try
	for try in 1 2 3; do
		# The repository follows $HOME (Java would take the account's home).
		if mvn -B -q -Dmaven.repo.local="$HOME/.m2/repository" -f "$src/pom.xml" dependency:build-classpath \
			-Dmdep.outputFile="$NEO4J_BUILD/classpath.txt" >"$NEO4J_BUILD/mvn.log" 2>&1; then
			break
		fi
		echo "neo4j: Maven failed (attempt $try of 3); see $NEO4J_BUILD/mvn.log" >&2
		[ "$try" -lt 3 ] || { tail -n 30 "$NEO4J_BUILD/mvn.log" >&2; return 1; }
		sleep 5
	done
	javac -nowarn -cp "$(cat "$NEO4J_BUILD/classpath.txt")" -d "$NEO4J_BUILD/classes" "$src/Main.java"
	echo "$stamp" >"$NEO4J_BUILD/stamp"
}

neo4j_jars_present() {
	local jar
	[ -s "$NEO4J_BUILD/classpath.txt" ] && [ -f "$NEO4J_BUILD/classes/Main.class" ] || return 1
	while IFS= read -r -d: jar; do
		[ -f "$jar" ] || return 1
	done < <(cat "$NEO4J_BUILD/classpath.txt" && printf ':')
}

# neo4j_password prints the generated password, creating it on first use.
neo4j_password() {
	local f="$NEO4J_STATE/password.env"
	if [ ! -s "$f" ]; then
		mkdir -p "$NEO4J_STATE"
		(
			umask 077
			printf 'NEO4J_PASSWORD=%s\n' "$(head -c 32 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 32)" >"$f"
		)
	fi
	sed -n 's/^NEO4J_PASSWORD=//p' "$f"
}

neo4j_pid() {
	local pid
	pid=$(cat "$NEO4J_STATE/pid" 2>/dev/null) || return 1
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null &&
		tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q " Main $NEO4J_STATE/home " &&
		echo "$pid"
}

neo4j_status() {
	neo4j_pid >/dev/null && [ -f "$NEO4J_STATE/ready" ]
}

# neo4j_free_port prints TOOLWARDEN_NEO4J_PORT if it is free, or else the
# first free port from 17687 on: another checkout's server may hold 17687.
neo4j_free_port() {
	local port
	if [ -n "${TOOLWARDEN_NEO4J_PORT:-}" ]; then
		if port_open "$TOOLWARDEN_NEO4J_PORT"; then
			echo "neo4j: 127.0.0.1:$TOOLWARDEN_NEO4J_PORT (TOOLWARDEN_NEO4J_PORT) is already in use" >&2
			return 1
		fi
		echo "$TOOLWARDEN_NEO4J_PORT"
		return 0
	fi
	for ((port = 17687; port < 17787; port++)); do
		if ! port_open "$port"; then
			echo "$port"
			return 0
		fi
	done
	echo "neo4j: no free port in 17687-17786; set TOOLWARDEN_NEO4J_PORT" >&2
	return 1
}

neo4j_up() {
	if neo4j_status; then
		return 0
	fi
	if neo4j_pid >/dev/null; then
		neo4j_wait_ready
		return
	fi
	neo4j_build
	local port password
	port=$(neo4j_free_port) || return 1
	password=$(neo4j_password)
	mkdir -p "$NEO4J_STATE/home"
	rm -f "$NEO4J_STATE/ready"
	echo "$port" >"$NEO4J_STATE/port"
	echo "neo4j: starting on 127.0.0.1:$port (log: $NEO4J_STATE/launcher.log)" >&2
	# setsid: the server outlives this script and ignores the terminal's
	# Ctrl-C; the password reaches it through the environment, not argv.
	# The class path goes through the environment too, keeping ps readable.
	NEO4J_PASSWORD="$password" CLASSPATH="$NEO4J_BUILD/classes:$(cat "$NEO4J_BUILD/classpath.txt")" \
		setsid java -Xms256m -Xmx768m -XX:+ExitOnOutOfMemoryError \
		--add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
		Main "$NEO4J_STATE/home" "$port" "$NEO4J_STATE/ready" \
		</dev/null >>"$NEO4J_STATE/launcher.log" 2>&1 &
	echo $! >"$NEO4J_STATE/pid"
	neo4j_wait_ready
}

# neo4j_wait_ready waits until the launcher has set the password and Bolt
# answers on its port.
neo4j_wait_ready() {
	local i port
	port=$(cat "$NEO4J_STATE/port")
	for ((i = 0; i < 300; i++)); do
		if [ -f "$NEO4J_STATE/ready" ] && port_open "$port"; then
			echo "neo4j: ready on bolt://127.0.0.1:$port" >&2
			return 0
		fi
		if ! kill -0 "$(cat "$NEO4J_STATE/pid")" 2>/dev/null; then
			echo "neo4j: the server exited during start; last lines of $NEO4J_STATE/launcher.log:" >&2
			tail -n 30 "$NEO4J_STATE/launcher.log" >&2
			return 1
		fi
		sleep 1
	done
	echo "neo4j: not ready after 300 s; see $NEO4J_STATE/launcher.log and $NEO4J_STATE/home/logs/debug.log" >&2
	return 1
}

neo4j_down() {
	local pid i
	if pid=$(neo4j_pid); then
		kill -TERM "$pid"
		for ((i = 0; i < 120; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.5
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "neo4j: no clean shutdown within 60 s; killing $pid" >&2
			kill -KILL "$pid"
		fi
	fi
	rm -f "$NEO4J_STATE/pid" "$NEO4J_STATE/ready"
}

neo4j_env() {
	local password
	password=$(neo4j_password)
	cat <<EOF
export TOOLWARDEN_GRAPH_URI=bolt://127.0.0.1:$(neo4j_port)
export TOOLWARDEN_GRAPH_USERNAME=neo4j
export TOOLWARDEN_GRAPH_PASSWORD_ENV=NEO4J_PASSWORD
export NEO4J_PASSWORD=$password
EOF
}
