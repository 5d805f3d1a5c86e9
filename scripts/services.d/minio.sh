# shellcheck shell=bash
# MinIO, the S3-compatible store behind the artifact tools. Sourced by
# scripts/services, which sets ROOT and SERVICES_DIR.
#
# The server is built once from source with `go install` (3-4 minutes) and
# cached for every checkout on the machine under
# ${XDG_CACHE_HOME:-~/.cache}/toolwarden/bin. It listens on 127.0.0.1 only,
# on TOOLWARDEN_MINIO_PORT (default: the first free port from 19000), with
# random root credentials kept in $SERVICES_DIR/minio/env (mode 600) and its
# data in $SERVICES_DIR/minio/data. `up` also creates the bucket.

MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
MINIO_BIN_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/toolwarden/bin"
MINIO_BIN="$MINIO_BIN_DIR/minio-$MINIO_VERSION"
MINIO_BUCKET=toolwarden-artifacts

# minio_install builds the server once; concurrent checkouts wait on a lock
# and an interrupted build leaves no binary behind.
minio_install() {
	[ -x "$MINIO_BIN" ] && return 0
	mkdir -p "$MINIO_BIN_DIR"
	(
		flock 9
		[ -x "$MINIO_BIN" ] && exit 0
		tmp=$(mktemp -d "$MINIO_BIN_DIR/.minio-build.XXXXXX")
		trap 'rm -rf "$tmp"' EXIT
		echo "scripts/services: building MinIO $MINIO_VERSION once (3-4 minutes) into $MINIO_BIN" >&2
		(cd "$tmp" && GOBIN="$tmp" go install "github.com/minio/minio@$MINIO_VERSION")
		mv "$tmp/minio" "$MINIO_BIN"
	) 9>"$MINIO_BIN_DIR/.minio.lock"
}

# minio_state loads, creating on first use, the port and root credentials.
minio_state() {
	local d="$SERVICES_DIR/minio"
	if [ ! -s "$d/env" ]; then
		local port="${TOOLWARDEN_MINIO_PORT:-}"
		if [ -z "$port" ]; then
			port=$(free_port 19000)
		fi
		(
			umask 077
			printf 'MINIO_PORT=%s\nMINIO_ROOT_USER=%s\nMINIO_ROOT_PASSWORD=%s\n' "$port" \
				"tw$(minio_random 18)" "$(minio_random 40)" >"$d/env"
		)
	fi
	# shellcheck source=/dev/null
	source "$d/env"
	[ -z "${TOOLWARDEN_MINIO_PORT:-}" ] || MINIO_PORT="$TOOLWARDEN_MINIO_PORT"
}

minio_random() {
	local s=""
	while [ ${#s} -lt "$1" ]; do
		s+=$(head -c 64 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
	done
	echo "${s:0:$1}"
}

# minio_status checks the recorded process is alive and still our MinIO,
# not another process that reused its pid.
minio_status() { pid_runs "$SERVICES_DIR/minio/pid" "*minio-$MINIO_VERSION server*"; }

minio_up() {
	local d="$SERVICES_DIR/minio"
	minio_install
	minio_state
	if ! minio_status; then
		mkdir -p "$d/data"
		echo "scripts/services: starting MinIO on 127.0.0.1:$MINIO_PORT (log: $d/log)" >&2
		MINIO_ROOT_USER="$MINIO_ROOT_USER" MINIO_ROOT_PASSWORD="$MINIO_ROOT_PASSWORD" \
			MINIO_BROWSER=off MINIO_UPDATE=off \
			"$MINIO_BIN" server --quiet --address "127.0.0.1:$MINIO_PORT" "$d/data" \
			</dev/null >>"$d/log" 2>&1 &
		echo $! >"$d/pid"
	fi
	(
		eval "$(minio_env)"
		cd "$ROOT" && go run ./scripts/minioctl -wait 60s
	) || {
		echo "scripts/services: MinIO did not become ready; last log lines:" >&2
		tail -n 20 "$d/log" >&2
		return 1
	}
}

minio_down() {
	if minio_status; then stop_pid "$SERVICES_DIR/minio/pid"; fi
	rm -f "$SERVICES_DIR/minio/pid"
}

minio_env() {
	minio_state
	cat <<EOT
export TOOLWARDEN_ARTIFACTS_ENDPOINT=127.0.0.1:$MINIO_PORT
export TOOLWARDEN_ARTIFACTS_USE_TLS=false
export TOOLWARDEN_ARTIFACTS_REGION=us-east-1
export TOOLWARDEN_ARTIFACTS_BUCKET=$MINIO_BUCKET
export TOOLWARDEN_ARTIFACTS_ACCESS_KEY=$MINIO_ROOT_USER
export TOOLWARDEN_ARTIFACTS_SECRET_KEY=$MINIO_ROOT_PASSWORD
export TOOLWARDEN_TEST_MINIO_BIN=$MINIO_BIN
EOT
}
