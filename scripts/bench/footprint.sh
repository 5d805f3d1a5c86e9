#!/usr/bin/env bash
# footprint.sh — what toolwarden holds in memory at idle, beside a bare
# mcp-go server, measured in one run by footprint: each server started
# over stdio (input kept open), initialize and tools/list, idle, then the
# PSS of its process and of every process it started (sandboxes, warm
# pool); then what 1,000 idle streamable HTTP sessions cost each.
#
# Usage (from anywhere inside the repo):
#   scripts/bench/footprint.sh
#   BEFORE_BIN=/tmp/tw-old scripts/bench/footprint.sh   # an earlier build too
#
# Environment:
#   ROUNDS          alternating rounds (default 3)
#   IDLE            idle wait before reading memory (default 15s: the
#                   server's idle release checks every 5 s)
#   SESSIONS        idle HTTP sessions per server (default 1000; 0 = none)
#   EXEC            0 = leave out toolwarden --allow run_script (needs a
#                   sandbox backend)
#   TOOLWARDEN_BIN  use this prebuilt toolwarden binary
#   BEFORE_BIN      also measure this toolwarden binary, as "before"
set -euo pipefail

ROUNDS="${ROUNDS:-3}"
IDLE="${IDLE:-15s}"
SESSIONS="${SESSIONS:-1000}"
EXEC="${EXEC:-1}"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/twfoot.XXXXXX")"
bin="$tmp/bin"
ws="$tmp/ws"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

log() { printf '==> %s\n' "$*" >&2; }

log "building into $bin"
mkdir -p "$bin" "$ws"
(cd "$repo" && go build -o "$bin/" ./scripts/bench/footprint ./scripts/bench/bareserver)
if [[ -n "${TOOLWARDEN_BIN:-}" ]]; then
  cp "$TOOLWARDEN_BIN" "$bin/toolwarden"
else
  (cd "$repo" && go build -o "$bin/toolwarden" ./cmd/toolwarden)
fi
echo "hello" >"$ws/hello.txt"

token="bench-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export FOOTPRINT_TOKEN="$token" TOOLWARDEN_HTTP_TOKEN="$token"
run_script='{"name":"run_script","arguments":{"interpreter":"bash","script":"echo ran"}}'

# Each toolwarden writes its own audit log; the sandboxes' state is this
# run's. HTTP servers admit one more session than are opened (the first
# one opened before the measurement).
env_of() { echo "env TOOLWARDEN_AUDIT_PATH=$tmp/audit-$1.jsonl TOOLWARDEN_EXEC_STATE_DIR=$tmp/state TOOLWARDEN_HTTP_MAX_SESSIONS=$((SESSIONS + 1))"; }
args=(--target "bare=$bin/bareserver --root $ws")
http=(--http "bare=$bin/bareserver --root $ws --http")
add() { # add NAME BINARY
  local name="$1" b="$2"
  args+=(--target "$name=$(env_of "$name") $b serve --workspace $ws")
  if [[ "$EXEC" == 1 ]]; then
    args+=(--target "$name+exec=$(env_of "$name-exec") $b serve --workspace $ws --allow run_script --approval run_script=allow"
      --call "$name+exec=$run_script")
  fi
  http+=(--http "$name=$(env_of "$name-http") $b serve --workspace $ws --http")
}
if [[ -n "${BEFORE_BIN:-}" ]]; then
  [[ -x "$BEFORE_BIN" ]] || { log "BEFORE_BIN $BEFORE_BIN is not an executable file"; exit 2; }
  cp "$BEFORE_BIN" "$bin/toolwarden-before"
  add before "$bin/toolwarden-before"
fi
add toolwarden "$bin/toolwarden"
[[ "$SESSIONS" -gt 0 ]] || http=()
log "footprint: $ROUNDS rounds, $IDLE idle, $SESSIONS HTTP sessions"
"$bin/footprint" "${args[@]}" "${http[@]}" --rounds "$ROUNDS" --idle "$IDLE" --sessions "$SESSIONS"
