# shellcheck shell=bash
# hydra: two real OpenID Providers (Ory Hydra v2, in-memory database) for
# the OAuth resource-server tests: the issuer toolwarden trusts, and an
# "other" issuer whose tokens it must refuse. Sourced by scripts/services,
# which sets ROOT and SERVICES_DIR.
#
# Hydra cannot be built with `go install pkg@version` (its go.mod has
# replace directives), so the module is fetched through the Go module
# proxy and built in a scratch copy, once (about 5 minutes), into
# ${XDG_CACHE_HOME:-~/.cache}/toolwarden/bin. Both listen on 127.0.0.1 only,
# on the first free ports from 24444 (public, admin; other: the next two),
# issue JWT access tokens, and keep nothing on disk but their log. `up`
# (re)creates the OAuth clients each time a provider starts, as the
# in-memory database forgets them; their secrets are generated once into
# $SERVICES_DIR/hydra/env (mode 600):
#   toolwarden-cc        client_credentials, scopes mcp:tools mcp:admin,
#                        audiences https://toolwarden.test/mcp, https://other.test/mcp
#   toolwarden-cc-bob    the same, another subject
#   toolwarden-cc-short  the same, access tokens living 1 s
#   toolwarden-pkce      public client, authorization code + PKCE, refresh

HYDRA_VERSION=v2.3.0
HYDRA_BIN_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/toolwarden/bin"
HYDRA_BIN="$HYDRA_BIN_DIR/hydra-$HYDRA_VERSION"
HYDRA_AUDIENCES='["https://toolwarden.test/mcp","https://other.test/mcp"]'

# hydra_install builds Hydra once; concurrent checkouts wait on a lock and
# an interrupted build leaves no binary behind.
hydra_install() {
	[ -x "$HYDRA_BIN" ] && return 0
	mkdir -p "$HYDRA_BIN_DIR"
	(
		flock 9
		[ -x "$HYDRA_BIN" ] && exit 0
		tmp=$(mktemp -d "$HYDRA_BIN_DIR/.hydra-build.XXXXXX")
		trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
		echo "scripts/services: building Ory Hydra $HYDRA_VERSION once (about 5 minutes) into $HYDRA_BIN" >&2
		src=$(GOFLAGS=-mod=mod go mod download -json "github.com/ory/hydra/v2@$HYDRA_VERSION" | jq -r .Dir)
		cp -r "$src/." "$tmp/src" && chmod -R u+w "$tmp/src"
		# The module zip leaves out the nested client module its replace
		# directive points at; the published one is the same code.
		cd "$tmp/src" && go mod edit -dropreplace github.com/ory/hydra-client-go/v2
		GOFLAGS=-mod=mod CGO_ENABLED=1 go build -tags sqlite,sqlite_omit_load_extension -o "$tmp/hydra" .
		mv "$tmp/hydra" "$HYDRA_BIN"
	) 9>"$HYDRA_BIN_DIR/.hydra.lock"
}

hydra_random() {
	local s=""
	while [ ${#s} -lt "$1" ]; do
		s+=$(head -c 64 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
	done
	echo "${s:0:$1}"
}

# hydra_state loads, creating on first use, the ports and secrets.
hydra_state() {
	local d="$SERVICES_DIR/hydra" p
	if [ ! -s "$d/env" ]; then
		p=$(free_port "${TOOLWARDEN_HYDRA_PORT:-24444}")
		local a o oa
		a=$(free_port $((p + 1)))
		o=$(free_port $((a + 1)))
		oa=$(free_port $((o + 1)))
		(
			umask 077
			printf 'HYDRA_PUBLIC=%s\nHYDRA_ADMIN=%s\nHYDRA_OTHER_PUBLIC=%s\nHYDRA_OTHER_ADMIN=%s\nHYDRA_SYSTEM_SECRET=%s\nHYDRA_CLIENT_SECRET=%s\n' \
				"$p" "$a" "$o" "$oa" "$(hydra_random 40)" "$(hydra_random 32)" >"$d/env"
		)
	fi
	# shellcheck source=/dev/null
	source "$d/env"
}

# hydra_running NAME checks the recorded process is alive and still our
# Hydra, not another process that reused its pid.
hydra_running() { pid_runs "$SERVICES_DIR/hydra/$1.pid" "*hydra-$HYDRA_VERSION serve all*"; }

hydra_status() { hydra_running main && hydra_running other; }

# hydra_start NAME PUBLIC ADMIN starts one provider unless it runs, waits
# until it is ready and creates its clients when it was started.
hydra_start() {
	local name=$1 pub=$2 adm=$3 d="$SERVICES_DIR/hydra" i
	hydra_running "$name" && return 0
	echo "scripts/services: starting Ory Hydra ($name) on 127.0.0.1:$pub (log: $d/$name.log)" >&2
	DSN=memory SECRETS_SYSTEM="$HYDRA_SYSTEM_SECRET" URLS_SELF_ISSUER="http://127.0.0.1:$pub" \
		SERVE_PUBLIC_HOST=127.0.0.1 SERVE_PUBLIC_PORT="$pub" SERVE_ADMIN_HOST=127.0.0.1 SERVE_ADMIN_PORT="$adm" \
		STRATEGIES_ACCESS_TOKEN=jwt LOG_LEVEL=warn \
		"$HYDRA_BIN" serve all --dev --sqa-opt-out </dev/null >>"$d/$name.log" 2>&1 &
	echo $! >"$d/$name.pid"
	for i in $(seq 1 120); do
		curl -fs "http://127.0.0.1:$adm/health/ready" >/dev/null 2>&1 && break
		[ "$i" -lt 120 ] || {
			echo "scripts/services: Hydra ($name) did not become ready; last log lines:" >&2
			tail -n 20 "$d/$name.log" >&2
			return 1
		}
		sleep 0.5
	done
	hydra_clients "$adm"
}

# hydra_clients creates the test clients on the provider at admin port $1.
hydra_clients() {
	local adm=$1 id
	for id in toolwarden-cc toolwarden-cc-bob toolwarden-cc-short; do
		hydra_post "$adm" "{\"client_id\":\"$id\",\"client_secret\":\"$HYDRA_CLIENT_SECRET\",
			\"grant_types\":[\"client_credentials\"],\"scope\":\"mcp:tools mcp:admin\",
			\"audience\":$HYDRA_AUDIENCES,\"token_endpoint_auth_method\":\"client_secret_basic\"}"
	done
	curl -fsS -X PUT "http://127.0.0.1:$adm/admin/clients/toolwarden-cc-short/lifespans" \
		-H 'Content-Type: application/json' -d '{"client_credentials_grant_access_token_lifespan":"1s"}' >/dev/null
	hydra_post "$adm" '{"client_id":"toolwarden-pkce","grant_types":["authorization_code","refresh_token"],
		"response_types":["code"],"scope":"openid offline_access mcp:tools","token_endpoint_auth_method":"none",
		"audience":'"$HYDRA_AUDIENCES"',"redirect_uris":["http://127.0.0.1:33418/callback","http://localhost:33418/callback"]}'
}

hydra_post() {
	curl -fsS -X POST "http://127.0.0.1:$1/admin/clients" -H 'Content-Type: application/json' -d "$2" >/dev/null
}

hydra_up() {
	mkdir -p "$SERVICES_DIR/hydra"
	hydra_install
	hydra_state
	hydra_start main "$HYDRA_PUBLIC" "$HYDRA_ADMIN"
	hydra_start other "$HYDRA_OTHER_PUBLIC" "$HYDRA_OTHER_ADMIN"
}

hydra_down() {
	local name
	for name in main other; do
		if hydra_running "$name"; then stop_pid "$SERVICES_DIR/hydra/$name.pid"; fi
		rm -f "$SERVICES_DIR/hydra/$name.pid"
	done
}

hydra_env() {
	hydra_state
	cat <<EOT
export TOOLWARDEN_TEST_OIDC_ISSUER=http://127.0.0.1:$HYDRA_PUBLIC
export TOOLWARDEN_TEST_OIDC_ADMIN=http://127.0.0.1:$HYDRA_ADMIN
export TOOLWARDEN_TEST_OIDC_OTHER_ISSUER=http://127.0.0.1:$HYDRA_OTHER_PUBLIC
export TOOLWARDEN_TEST_OIDC_CLIENT_SECRET=$HYDRA_CLIENT_SECRET
EOT
}
