#!/usr/bin/env bash
# Load test of three toolwarden replicas behind HAProxy sharing a private
# Redis/Valkey (docs/replicas.md): CONNECTIONS client connections (1000)
# make stateless read_file calls through the balancer for DURATION (60s);
# prints calls/s, p50/p99 and errors (scripts/bench/replicaload), and each
# replica's goroutines and heap in use (from its /metrics), RSS, threads and
# open files before the load and after it ended.
#
#   scripts/bench/replicas.sh                      # 1000 connections, 60 s
#   DURATION=15s CONNECTIONS=300 scripts/bench/replicas.sh
#   REPEAT=3 scripts/bench/replicas.sh             # the load 3 times: what stays after each
#
# The "after" sample is taken SETTLE (40s) after the load ended, past
# HAProxy's keep-alive, so that what remains is what the replicas kept.
#
# Needs redis-server or valkey-server and haproxy: `scripts/services up
# valkey haproxy` installs them (Debian packages). Everything it starts
# runs on 127.0.0.1 and is stopped when it exits.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
DURATION="${DURATION:-60s}"
SETTLE="${SETTLE:-40}"
CONNECTIONS="${CONNECTIONS:-1000}"
REPEAT="${REPEAT:-1}"
REDIS_BIN="${TOOLWARDEN_TEST_REDIS_BIN:-$(command -v valkey-server || command -v redis-server || true)}"
HAPROXY_BIN="${TOOLWARDEN_TEST_HAPROXY_BIN:-$(command -v haproxy || echo /usr/sbin/haproxy)}"
[ -x "$REDIS_BIN" ] && [ -x "$HAPROXY_BIN" ] || {
	echo "replicas.sh: needs redis-server/valkey-server and haproxy (scripts/services up valkey haproxy)" >&2
	exit 1
}
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
wait_port() {
	local i
	for i in $(seq 1 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	echo "replicas.sh: nothing listens on port $1" >&2
	return 1
}

echo "== building toolwarden and replicaload" >&2
(cd "$ROOT" && go build -o "$tmp/" ./cmd/toolwarden ./scripts/bench/replicaload)
mkdir -p "$tmp/ws"
echo "hello from toolwarden" >"$tmp/ws/hello.txt"

redis_port=$(free_port)
password=$(head -c 32 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
printf 'bind 127.0.0.1\nport %s\nrequirepass %s\nsave ""\nappendonly no\n' "$redis_port" "$password" |
	"$REDIS_BIN" - >"$tmp/redis.log" 2>&1 &
pids+=($!)
wait_port "$redis_port"

export TW_REDIS_PASSWORD="$password" TW_CLUSTER_SECRET
TW_CLUSTER_SECRET=$(head -c 48 /dev/urandom | base64)
token=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
declare -A replica_pid replica_metrics
lb_env=()
for name in a b c; do
	port=$(free_port)
	replica_metrics[$name]="127.0.0.1:$(free_port)"
	TOOLWARDEN_METRICS_ADDR="${replica_metrics[$name]}" TOOLWARDEN_HTTP_TOKEN="$token" TOOLWARDEN_AUDIT_PATH="$tmp/$name.jsonl" \
		TOOLWARDEN_CLUSTER_REDIS_URL="redis://127.0.0.1:$redis_port/0" TOOLWARDEN_CLUSTER_REDIS_PASSWORD_ENV=TW_REDIS_PASSWORD \
		TOOLWARDEN_CLUSTER_SECRET_ENV=TW_CLUSTER_SECRET TOOLWARDEN_CLUSTER_REPLICA_ID="tw-$name" \
		TOOLWARDEN_LIMITS_MAX_CALLS_PER_SESSION=1000000000 TOOLWARDEN_LIMITS_MAX_OUTPUT_BYTES_PER_SESSION=1000000000000 \
		TOOLWARDEN_LOG_LEVEL=warn \
		"$tmp/toolwarden" serve --workspace "$tmp/ws" --http "127.0.0.1:$port" 2>"$tmp/$name.log" &
	pids+=($!)
	replica_pid[$name]=$!
	lb_env+=("TOOLWARDEN_REPLICA_${name^^}=127.0.0.1:$port")
	wait_port "$port"
done
lb_port=$(free_port)
env TOOLWARDEN_LB_BIND="127.0.0.1:$lb_port" "${lb_env[@]}" "$HAPROXY_BIN" -db -f "$ROOT/configs/examples/haproxy.cfg" >"$tmp/haproxy.log" 2>&1 &
pids+=($!)
wait_port "$lb_port"

# sample prints one replica's goroutines and heap in use (its /metrics),
# resident memory, threads and open files.
sample() {
	local pid=$1 metrics
	metrics=$(curl -fsS "http://${replica_metrics[$2]}/metrics")
	printf 'goroutines=%s heap_inuse=%sKiB rss=%sKiB threads=%s fds=%s' \
		"$(awk '$1 == "go_goroutines" {print $2}' <<<"$metrics")" \
		"$(awk '$1 == "go_memstats_heap_inuse_bytes" {printf "%d", $2/1024}' <<<"$metrics")" \
		"$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")" \
		"$(awk '/Threads/ {print $2}' "/proc/$pid/status")" "$(ls "/proc/$pid/fd" | wc -l)"
}

url="http://127.0.0.1:$lb_port/mcp"
"$tmp/replicaload" --url "$url" --token "$token" --connections 50 --duration 2s >/dev/null # warm-up
for name in a b c; do echo "before  $name: $(sample "${replica_pid[$name]}" "$name")"; done
for round in $(seq 1 "$REPEAT"); do
	echo "== $CONNECTIONS connections through HAProxy for $DURATION (load $round of $REPEAT)" >&2
	"$tmp/replicaload" --url "$url" --token "$token" --connections "$CONNECTIONS" --duration "$DURATION"
	sleep "$SETTLE" # the load has ended: let idle connections close
	for name in a b c; do echo "after $round $name: $(sample "${replica_pid[$name]}" "$name") audit_lines=$(wc -l <"$tmp/$name.jsonl")"; done
done
