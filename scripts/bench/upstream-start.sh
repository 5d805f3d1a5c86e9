#!/usr/bin/env bash
# upstream-start.sh — how long a sandboxed upstream takes to start: the
# MCP reference server "everything" (npm, pinned) as toolwarden's only
# upstream, sandboxed under runsc and under bwrap, beside the same server
# unsandboxed behind toolwarden and the server alone. startload times each
# from spawn to the tools/list answer (toolwarden answers it once the
# upstream was started, initialized and listed), then the first call of
# everything's echo, in alternating rounds; issue 35 item 7 bounds the
# sandboxed start at 1 s. toolwarden's log line "upstream" says the
# upstream's own part (started_in: spawn, initialize, tools/list). Run as root (runsc's rootful mode, as the e2e
# tests run it).
#
# Usage (from anywhere inside the repo):
#   scripts/bench/upstream-start.sh
#
# Environment: ROUNDS (7), TOOLWARDEN_BIN, TOOLWARDEN_CACHE (where the npm
# server is installed).
set -euo pipefail

ROUNDS="${ROUNDS:-7}"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/twupstart.XXXXXX")"
bin="$tmp/bin"
ws="$tmp/ws"
# runsc keeps its empty network namespace mounted in its state directory.
cleanup() {
  grep -o "$tmp/[^ ]*null-netns" /proc/mounts | xargs -r -n1 umount 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '==> %s\n' "$*" >&2; }

log "building into $bin"
mkdir -p "$bin" "$ws"
chmod 755 "$tmp"
(cd "$repo" && go build -o "$bin/" ./scripts/bench/startload)
if [[ -n "${TOOLWARDEN_BIN:-}" ]]; then
  cp "$TOOLWARDEN_BIN" "$bin/toolwarden"
else
  (cd "$repo" && go build -o "$bin/toolwarden" ./cmd/toolwarden)
fi
ev="$(cd "$repo" && scripts/upstreams/setup-server-everything | tail -n 1)"
# .../<prefix>/node_modules/.bin/mcp-server-everything: the sandbox is
# shown the install prefix, read-only.
prefix="$(dirname "$(dirname "$(dirname "$ev")")")"

conf() { # conf NAME LINE: a config with everything as the upstream
  cat >"$tmp/$1.yaml" <<YAML
policy:
  allow: [everything__echo]
upstreams:
  - name: everything
    command: [$ev, stdio]
    $2
YAML
}
conf unsandboxed "sandbox: false"
conf sandboxed "mounts: [$prefix]"
tw() { # tw NAME BACKEND CONFIG: a toolwarden target
  targets+=(--target "$1=env TOOLWARDEN_AUDIT_PATH=$tmp/audit-$1.jsonl TOOLWARDEN_EXEC_STATE_DIR=$tmp/state-$1 TOOLWARDEN_EXEC_BACKEND=$2 $bin/toolwarden serve --workspace $ws --config $tmp/$3.yaml")
}
targets=(--target "alone=$ev stdio")
tw unsandboxed runsc unsandboxed
tw runsc runsc sandboxed
tw bwrap bwrap sandboxed
log "startload: $ROUNDS rounds, spawn to the tools/list answer, then the first echo"
"$bin/startload" "${targets[@]}" --rounds "$ROUNDS" --call '{"name":"everything__echo","arguments":{"message":"hi"}}' 2>&1
