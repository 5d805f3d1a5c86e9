#!/usr/bin/env bash
# compare.sh — measure toolwarden's per-call overhead against a bare mcp-go
# server exposing the same read_file tool.
#
# Usage (from anywhere inside the repo):
#   scripts/bench/compare.sh                 # stdio, N=3000
#   N=10000 CONCURRENCY=4 scripts/bench/compare.sh
#   MODE=http scripts/bench/compare.sh       # streamable HTTP on 127.0.0.1
#   BARE_ONLY=1 scripts/bench/compare.sh     # skip toolwarden (baseline only)
#
# Environment:
#   N            measured calls per target (default 3000)
#   WARMUP       unmeasured warm-up calls (default 200)
#   CONCURRENCY  mcpload workers (default 1)
#   MODE         stdio (default) or http
#   BARE_ONLY    1 = only benchmark the bare server
#   HTTP_PATH    toolwarden's HTTP endpoint path (default /mcp)
#   CHILD_STDERR 1 = show stdio servers' stderr
#   TOOLWARDEN_BIN  use this prebuilt toolwarden binary instead of building
#                   ./cmd/toolwarden
set -euo pipefail

N="${N:-3000}"
WARMUP="${WARMUP:-200}"
CONCURRENCY="${CONCURRENCY:-1}"
MODE="${MODE:-stdio}"
BARE_ONLY="${BARE_ONLY:-0}"
HTTP_PATH="${HTTP_PATH:-/mcp}"
CHILD_STDERR="${CHILD_STDERR:-0}"
TOOLWARDEN_BIN="${TOOLWARDEN_BIN:-}"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/twbench.XXXXXX")"
bin="$tmp/bin"
ws="$tmp/ws"
pids=()

cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '==> %s\n' "$*" >&2; }

build() {
  log "building into $bin"
  mkdir -p "$bin"
  (cd "$repo" && go build -o "$bin/" ./scripts/bench/mcpload ./scripts/bench/bareserver)
  if [[ "$BARE_ONLY" == 1 ]]; then
    return 0
  fi
  if [[ -n "$TOOLWARDEN_BIN" ]]; then
    cp "$TOOLWARDEN_BIN" "$bin/toolwarden"
  else
    (cd "$repo" && go build -o "$bin/toolwarden" ./cmd/toolwarden)
  fi
}

make_workspace() {
  mkdir -p "$ws"
  # 3072 random bytes -> exactly 4096 base64 characters (4 KiB of text).
  head -c 3072 /dev/urandom | base64 -w0 >"$ws/bench.txt"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# wait_port PORT PID LOGFILE: wait until PORT accepts connections.
wait_port() {
  local port="$1" pid="$2" logfile="$3" i
  for ((i = 0; i < 100; i++)); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      log "server exited early; log:"; cat "$logfile" >&2; return 1
    fi
    sleep 0.1
  done
  log "timed out waiting for port $port; log:"; cat "$logfile" >&2
  return 1
}

# load ARGS...: run mcpload with the shared benchmark options.
load() {
  local extra=()
  if [[ "$CHILD_STDERR" == 1 ]]; then
    extra+=(--child-stderr)
  fi
  "$bin/mcpload" --tool read_file --args '{"path":"bench.txt"}' \
    --n "$N" --warmup "$WARMUP" --concurrency "$CONCURRENCY" --json \
    "${extra[@]}" "$@"
}

tw_env=(
  "TOOLWARDEN_AUDIT_PATH=$tmp/audit.jsonl"
  "TOOLWARDEN_LIMITS_MAX_CALLS_PER_SESSION=1000000"
)

bench_stdio() {
  log "bare server over stdio (N=$N)"
  load --cmd "$bin/bareserver --root $ws" >"$tmp/bare.json"
  if [[ "$BARE_ONLY" == 1 ]]; then
    return 0
  fi
  log "toolwarden over stdio (N=$N)"
  local envargs=() kv
  for kv in "${tw_env[@]}"; do envargs+=(--env "$kv"); done
  load --cmd "$bin/toolwarden serve --workspace $ws" "${envargs[@]}" >"$tmp/tw.json"
}

bench_http() {
  local port
  port="$(free_port)"
  log "bare server over HTTP on 127.0.0.1:$port (N=$N)"
  "$bin/bareserver" --root "$ws" --http "127.0.0.1:$port" 2>"$tmp/bare.log" &
  pids+=("$!")
  wait_port "$port" "$!" "$tmp/bare.log"
  load --url "http://127.0.0.1:$port/mcp" >"$tmp/bare.json"
  if [[ "$BARE_ONLY" == 1 ]]; then
    return 0
  fi

  port="$(free_port)"
  local token
  token="bench-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  log "toolwarden over HTTP on 127.0.0.1:$port (N=$N)"
  env "${tw_env[@]}" TOOLWARDEN_HTTP_TOKEN="$token" \
    "$bin/toolwarden" serve --workspace "$ws" --http "127.0.0.1:$port" 2>"$tmp/tw.log" &
  pids+=("$!")
  wait_port "$port" "$!" "$tmp/tw.log"
  MCPLOAD_TOKEN="$token" load --url "http://127.0.0.1:$port$HTTP_PATH" >"$tmp/tw.json"
}

summarize() {
  local tw_file=""
  if [[ "$BARE_ONLY" != 1 ]]; then
    tw_file="$tmp/tw.json"
  fi
  python3 - "$MODE" "$tmp/bare.json" "$tw_file" <<'PY'
import json, sys

mode, bare_path, tw_path = sys.argv[1], sys.argv[2], sys.argv[3]
bare = json.load(open(bare_path))
print(f"bare       ({mode}): {json.dumps(bare)}")
if not tw_path:
    print(f"bare calls/s: {bare['calls_per_sec']:.1f}")
    sys.exit(0)
tw = json.load(open(tw_path))
print(f"toolwarden ({mode}): {json.dumps(tw)}")
print()
print(f"{'':12}{'p50 us':>10}{'p99 us':>10}{'calls/s':>10}{'errors':>8}")
for name, r in (("bare", bare), ("toolwarden", tw)):
    print(f"{name:12}{r['p50_us']:>10.1f}{r['p99_us']:>10.1f}{r['calls_per_sec']:>10.1f}{r['errors']:>8}")
print()
print(f"p50 overhead ratio (toolwarden/bare): {tw['p50_us'] / bare['p50_us']:.2f}")
PY
}

main() {
  case "$MODE" in
    stdio | http) ;;
    *) log "MODE must be stdio or http, got '$MODE'"; exit 2 ;;
  esac
  build
  make_workspace
  "bench_$MODE"
  summarize
}

main "$@"
