# shellcheck shell=bash
# valkey: the Redis-protocol server that several toolwarden replicas share
# their limits and approval state through (cluster.redis_url). Sourced by
# scripts/services, which sets ROOT and SERVICES_DIR.
#
# The server is the Debian package valkey-server, or redis-server where
# the distribution has no Valkey yet (Debian 12), installed once with
# apt-get. It listens on 127.0.0.1 only, on TOOLWARDEN_VALKEY_PORT (default:
# the first free port from 16379), with a password generated once into
# $SERVICES_DIR/valkey/env (mode 600), no persistence, and its log in
# $SERVICES_DIR/valkey/log. `env` also names the server binary, so that a
# test may start a private one it can stop and restart.

# valkey_bin prints the installed server binary, if any.
valkey_bin() {
	command -v valkey-server 2>/dev/null || command -v redis-server 2>/dev/null || return 1
}

# valkey_install installs the Debian package once.
valkey_install() {
	valkey_bin >/dev/null && return 0
	command -v apt-get >/dev/null || {
		echo "valkey: needs valkey-server or redis-server on PATH (no apt-get to install it)" >&2
		return 1
	}
	local pkg=valkey-server sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	apt-cache show valkey-server >/dev/null 2>&1 || pkg=redis-server
	echo "scripts/services: installing the Debian package $pkg" >&2
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$pkg" >&2
}

# valkey_state loads, creating on first use, the port and password.
valkey_state() {
	local d="$SERVICES_DIR/valkey"
	mkdir -p "$d"
	if [ ! -s "$d/env" ]; then
		local port="${TOOLWARDEN_VALKEY_PORT:-}"
		if [ -z "$port" ]; then
			port=$(free_port 16379)
		fi
		(
			umask 077
			printf 'VALKEY_PORT=%s\nVALKEY_PASSWORD=%s\n' "$port" "$(head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 40)" >"$d/env"
		)
	fi
	# shellcheck source=/dev/null
	source "$d/env"
}

# valkey_status checks the recorded process is alive and still our server,
# not another process that reused its pid.
valkey_status() { pid_runs "$SERVICES_DIR/valkey/pid" "*-server*"; }

valkey_up() {
	local d="$SERVICES_DIR/valkey" bin i
	valkey_install
	valkey_state
	bin=$(valkey_bin)
	if ! valkey_status; then
		echo "scripts/services: starting $(basename "$bin") on 127.0.0.1:$VALKEY_PORT (log: $d/log)" >&2
		# The password goes in on stdin as a config file, not in argv.
		printf 'bind 127.0.0.1\nport %s\nrequirepass %s\nsave ""\nappendonly no\ndir %s\nlogfile %s\ndaemonize no\n' \
			"$VALKEY_PORT" "$VALKEY_PASSWORD" "$d" "$d/log" | "$bin" - >/dev/null 2>&1 &
		echo $! >"$d/pid"
	fi
	for i in $(seq 1 100); do
		if port_open "$VALKEY_PORT"; then return 0; fi
		sleep 0.1
	done
	echo "scripts/services: $(basename "$bin") did not become ready; last log lines:" >&2
	tail -n 20 "$d/log" >&2
	return 1
}

valkey_down() {
	if valkey_status; then stop_pid "$SERVICES_DIR/valkey/pid"; fi
	rm -f "$SERVICES_DIR/valkey/pid"
}

valkey_env() {
	valkey_state
	cat <<EOT
export TOOLWARDEN_TEST_REDIS_URL=redis://127.0.0.1:$VALKEY_PORT/0
export TOOLWARDEN_TEST_REDIS_PASSWORD=$VALKEY_PASSWORD
export TOOLWARDEN_TEST_REDIS_BIN=$(valkey_bin || true)
EOT
}
