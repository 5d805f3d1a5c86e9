#!/usr/bin/env bash
# startup.sh — how long toolwarden takes from spawn to its tools/list answer
# over stdio, as an IDE that starts one server per window waits for it,
# beside a bare mcp-go server and the reference filesystem MCP server
# (Node), measured in one run by startload: alternating rounds, medians,
# and each server's ratio to the bare one.
#
# Usage (from anywhere inside the repo):
#   scripts/bench/startup.sh
#   BEFORE_BIN=/tmp/tw-old scripts/bench/startup.sh   # an earlier build too
#
# Environment:
#   ROUNDS          alternating rounds (default 9)
#   REFERENCE       0 = leave out the reference filesystem server (needs npm)
#   CALL            1 = after tools/list, time the first tools/call (read_file
#                   of hello.txt: toolwarden's output filter is built by it);
#                   leaves out the reference server, which reads no relative path
#   TOOLWARDEN_BIN  use this prebuilt toolwarden binary
#   BEFORE_BIN      also start this toolwarden binary (an earlier build), as
#                   "before" and "before+exec", in the same rounds
set -euo pipefail

ROUNDS="${ROUNDS:-9}"
REFERENCE="${REFERENCE:-1}"
CALL="${CALL:-0}"
call=()
if [[ "$CALL" == 1 ]]; then
  REFERENCE=0
  call=(--call '{"name":"read_file","arguments":{"path":"hello.txt"}}')
fi

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/twstart.XXXXXX")"
bin="$tmp/bin"
ws="$tmp/ws"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

log() { printf '==> %s\n' "$*" >&2; }

log "building into $bin"
mkdir -p "$bin" "$ws"
(cd "$repo" && go build -o "$bin/" ./scripts/bench/startload ./scripts/bench/bareserver)
if [[ -n "${TOOLWARDEN_BIN:-}" ]]; then
  cp "$TOOLWARDEN_BIN" "$bin/toolwarden"
else
  (cd "$repo" && go build -o "$bin/toolwarden" ./cmd/toolwarden)
fi
echo "hello" >"$ws/hello.txt"

# Each toolwarden writes its own audit log (two on one file would wait
# for each other's writer lock); the sandboxes' state is this run's.
tw() { # tw NAME BINARY ARGS...: a toolwarden target
  local name="$1" b="$2"
  shift 2
  targets+=(--target "$name=env TOOLWARDEN_AUDIT_PATH=$tmp/audit-$name.jsonl TOOLWARDEN_EXEC_STATE_DIR=$tmp/state $b serve --workspace $ws $*")
}
targets=(--target "bare=$bin/bareserver --root $ws")
if [[ -n "${BEFORE_BIN:-}" ]]; then
  [[ -x "$BEFORE_BIN" ]] || { log "BEFORE_BIN $BEFORE_BIN is not an executable file"; exit 2; }
  cp "$BEFORE_BIN" "$bin/toolwarden-before"
  tw before "$bin/toolwarden-before"
  tw before+exec "$bin/toolwarden-before" --allow run_script
fi
tw toolwarden "$bin/toolwarden"
tw toolwarden+exec "$bin/toolwarden" --allow run_script
if [[ "$REFERENCE" == 1 ]]; then
  ref="$("$repo/scripts/bench/setup-reference-fs" | tail -n 1)"
  targets+=(--target "reference=node $ref $ws")
fi
log "startload: $ROUNDS rounds, spawn to the tools/list answer"
"$bin/startload" "${targets[@]}" "${call[@]}" --rounds "$ROUNDS"
