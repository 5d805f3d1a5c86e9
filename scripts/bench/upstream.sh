#!/usr/bin/env bash
# upstream.sh — what toolwarden adds in front of a stdio upstream MCP
# server: rawload (raw JSON-RPC over pipes, no MCP client library) calls
# bareserver's read_file directly ("direct") and through toolwarden
# serving bareserver as an upstream ("guarded": the whole guard, the tool
# allowed by policy, its capability granted, approval.modes allow, audit
# on), in alternating rounds of one run; the ratio's median is the figure
# issue 35 item 7 bounds at 1.2.
#
# Usage (from anywhere inside the repo):
#   scripts/bench/upstream.sh
#   BEFORE_BIN=/tmp/tw-old scripts/bench/upstream.sh   # an earlier build too
#
# Environment: N (2000), ROUNDS (6), WARMUP (200), TOOLWARDEN_BIN,
# BEFORE_BIN.
set -euo pipefail

N="${N:-2000}"
ROUNDS="${ROUNDS:-6}"
WARMUP="${WARMUP:-200}"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/twupbench.XXXXXX")"
bin="$tmp/bin"
ws="$tmp/ws"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

log() { printf '==> %s\n' "$*" >&2; }

log "building into $bin"
mkdir -p "$bin" "$ws"
(cd "$repo" && go build -o "$bin/" ./scripts/bench/rawload ./scripts/bench/bareserver)
if [[ -n "${TOOLWARDEN_BIN:-}" ]]; then
  cp "$TOOLWARDEN_BIN" "$bin/toolwarden"
else
  (cd "$repo" && go build -o "$bin/toolwarden" ./cmd/toolwarden)
fi
head -c 3072 /dev/zero | tr '\0' 'x' | fold -w 64 >"$ws/bench.txt"

# The upstream is bareserver confined to the workspace, unsandboxed (the
# sandbox's cost is its own benchmark); the default limits would stop a
# long run.
cat >"$tmp/toolwarden.yaml" <<YAML
policy:
  allow: [bare__read_file]
capabilities:
  grant: ["mcp:call:bare/read_file"]
approval:
  modes: {bare__read_file: allow}
upstreams:
  - name: bare
    command: [$bin/bareserver, --root, $ws]
    sandbox: false
YAML
export TOOLWARDEN_LIMITS_MAX_CALLS_PER_SESSION=10000000 TOOLWARDEN_LIMITS_MAX_OUTPUT_BYTES_PER_SESSION=1099511627776
export XDG_STATE_HOME="$tmp/state"

targets=(--target "direct=stdio:$bin/bareserver --root $ws")
if [[ -n "${BEFORE_BIN:-}" ]]; then
  cp "$BEFORE_BIN" "$bin/toolwarden-before"
  targets+=(--target "before=stdio:env TOOLWARDEN_AUDIT_PATH=$tmp/audit-before.jsonl $bin/toolwarden-before serve --workspace $ws --config $tmp/toolwarden.yaml")
fi
targets+=(--target "guarded=stdio:env TOOLWARDEN_AUDIT_PATH=$tmp/audit.jsonl $bin/toolwarden serve --workspace $ws --config $tmp/toolwarden.yaml")
log "rawload: $ROUNDS rounds of $N calls; read_file of a 3 KiB file"
"$bin/rawload" "${targets[@]}" --target-tool "guarded=bare__read_file" ${BEFORE_BIN:+--target-tool "before=bare__read_file"} \
  --tool read_file --args '{"path":"bench.txt"}' --n "$N" --rounds "$ROUNDS" --warmup "$WARMUP"
