#!/usr/bin/env bash
# compare.sh — toolwarden's per-call cost beside a bare mcp-go server and the
# reference filesystem MCP server (Node), measured in one run by rawload: a
# lean client (raw JSON-RPC over pipes or plain HTTP POSTs, no MCP client
# library), the servers called alternately in rounds, ratios to the bare
# server per round and their medians.
#
# Usage (from anywhere inside the repo):
#   scripts/bench/compare.sh                     # stdio, 6 rounds of 2000 calls
#   MODE=http CONCURRENCY=16 scripts/bench/compare.sh
#   PROTOCOL=2026-07-28 MODE=http scripts/bench/compare.sh
#
# Environment:
#   N            measured calls per server per round (default 2000)
#   ROUNDS       alternating rounds (default 6; a multiple of the number of
#                servers gives each one every place in a round equally)
#   WARMUP       unmeasured calls per server first (default 200)
#   CONCURRENCY  calls in flight per server (default 1)
#   MODE         stdio (default) or http
#   PROTOCOL     2025-11-25 (default) or 2026-07-28
#   REFERENCE    0 = leave out the reference filesystem server (needs npm)
#   CONTENT      base64 (default: 4 KiB of base64 of random bytes, one line)
#   SEED         the random bytes' seed (default 1), or "random" for new ones
#                each run: over HTTP the ratios move by a few percent with
#                the file (one in ten holds a secret rule's keyword by chance)
#                or source (the first 4 KiB of this repo's mcpserver/*.go)
#   TOOLWARDEN_BIN  use this prebuilt toolwarden binary
#   BEFORE_BIN      also run this toolwarden binary (an earlier build), as
#                   "before", in the same alternating rounds
set -euo pipefail

N="${N:-2000}"
ROUNDS="${ROUNDS:-6}"
WARMUP="${WARMUP:-200}"
CONCURRENCY="${CONCURRENCY:-1}"
MODE="${MODE:-stdio}"
PROTOCOL="${PROTOCOL:-2025-11-25}"
REFERENCE="${REFERENCE:-1}"
CONTENT="${CONTENT:-base64}"
SEED="${SEED:-1}"

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
  (cd "$repo" && go build -o "$bin/" ./scripts/bench/rawload ./scripts/bench/bareserver)
  if [[ -n "${TOOLWARDEN_BIN:-}" ]]; then
    cp "$TOOLWARDEN_BIN" "$bin/toolwarden"
  else
    (cd "$repo" && go build -o "$bin/toolwarden" ./cmd/toolwarden)
  fi
  if [[ -n "${BEFORE_BIN:-}" ]]; then
    [[ -x "$BEFORE_BIN" ]] || { log "BEFORE_BIN $BEFORE_BIN is not an executable file"; exit 2; }
    cp "$BEFORE_BIN" "$bin/toolwarden-before"
  fi
}

make_workspace() {
  mkdir -p "$ws"
  case "$CONTENT" in
    # 3072 random bytes -> exactly 4096 base64 characters (4 KiB of text).
    base64) random_bytes 3072 | base64 -w0 >"$ws/bench.txt" ;;
    # Source text as read_file mostly sees: words, punctuation, line breaks.
    source) head -c 4096 < <(cat "$repo"/mcpserver/*.go) >"$ws/bench.txt" ;;
    *) log "CONTENT must be base64 or source, got '$CONTENT'"; exit 2 ;;
  esac
}

# random_bytes N: N bytes from SEED's generator, or /dev/urandom.
random_bytes() {
  if [[ "$SEED" == random ]]; then
    head -c "$1" /dev/urandom
  else
    python3 -c 'import random, sys; random.seed(int(sys.argv[2])); sys.stdout.buffer.write(random.randbytes(int(sys.argv[1])))' "$1" "$SEED"
  fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# wait_port PORT PID LOGFILE: wait until PORT accepts connections.
wait_port() {
  local port="$1" pid="$2" logfile="$3" i
  for ((i = 0; i < 100; i++)); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then log "server exited early; log:"; cat "$logfile" >&2; return 1; fi
    sleep 0.1
  done
  log "timed out waiting for port $port; log:"; cat "$logfile" >&2
  return 1
}

# start_http NAME CMD...: start a server on a free port (its address is
# the command's last argument); sets url to its base URL.
start_http() {
  local name="$1" port
  shift
  port="$(free_port)"
  "$@" "127.0.0.1:$port" >"$tmp/$name.log" 2>&1 &
  pids+=("$!")
  wait_port "$port" "$!" "$tmp/$name.log"
  url="http://127.0.0.1:$port"
}

main() {
  case "$MODE" in stdio | http) ;; *) log "MODE must be stdio or http, got '$MODE'"; exit 2 ;; esac
  [[ "$SEED" == random || "$SEED" =~ ^[0-9]+$ ]] || { log "SEED must be a number or random, got '$SEED'"; exit 2; }
  build
  make_workspace
  # The default limits (10,000 calls and 256 MiB of output per identity
  # and hour) would stop a long run: raised here, for the benchmark only.
  export TOOLWARDEN_AUDIT_PATH="$tmp/audit.jsonl" TOOLWARDEN_LIMITS_MAX_CALLS_PER_SESSION=10000000 \
    TOOLWARDEN_LIMITS_MAX_OUTPUT_BYTES_PER_SESSION=1099511627776
  local targets=() ref=""
  if [[ "$REFERENCE" == 1 ]]; then
    ref="$("$repo/scripts/bench/setup-reference-fs" | tail -n 1)"
  fi
  if [[ "$MODE" == stdio ]]; then
    targets+=(--target "bare=stdio:$bin/bareserver --root $ws")
    # Each toolwarden writes its own audit log: two on one file would
    # wait for each other's writer lock.
    [[ -z "${BEFORE_BIN:-}" ]] || targets+=(--target "before=stdio:env TOOLWARDEN_AUDIT_PATH=$tmp/audit-before.jsonl $bin/toolwarden-before serve --workspace $ws")
    targets+=(--target "toolwarden=stdio:$bin/toolwarden serve --workspace $ws")
    [[ -z "$ref" ]] || targets+=(--target "reference=stdio:node $ref $ws")
  else
    local token url
    token="bench-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
    export RAWLOAD_TOKEN="$token" TOOLWARDEN_HTTP_TOKEN="$token"
    start_http bare "$bin/bareserver" --root "$ws" --http
    targets+=(--target "bare=http:$url/mcp")
    if [[ -n "${BEFORE_BIN:-}" ]]; then
      start_http before env TOOLWARDEN_AUDIT_PATH="$tmp/audit-before.jsonl" "$bin/toolwarden-before" serve --workspace "$ws" --http
      targets+=(--target "before=http:$url/mcp")
    fi
    start_http toolwarden "$bin/toolwarden" serve --workspace "$ws" --http
    targets+=(--target "toolwarden=http:$url/mcp")
    # The reference server speaks stdio only.
    [[ -z "$ref" ]] || log "MODE=http: the reference filesystem server has no HTTP transport; left out"
  fi
  log "rawload: $ROUNDS rounds of $N calls, concurrency $CONCURRENCY, $MODE, protocol $PROTOCOL"
  "$bin/rawload" "${targets[@]}" --target-tool reference=read_text_file \
    --target-args "reference={\"path\":\"$ws/bench.txt\"}" \
    --tool read_file --args '{"path":"bench.txt"}' \
    --n "$N" --rounds "$ROUNDS" --warmup "$WARMUP" --concurrency "$CONCURRENCY" --protocol "$PROTOCOL"
}

main "$@"
