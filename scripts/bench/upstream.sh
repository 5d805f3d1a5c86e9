#!/usr/bin/env bash
# upstream.sh — what toolwarden adds in front of a stdio upstream MCP
# server: rawload (raw JSON-RPC over pipes, no MCP client library) calls
# an upstream's tool directly ("direct"), through scripts/bench/relay
# ("relay": a process that copies lines both ways and parses nothing, the
# floor of any stdio proxy) and through toolwarden serving it as an
# upstream ("guarded": the whole guard, the tool allowed by policy, its
# capability granted, approval.modes allow, audit on), in alternating
# rounds of one run. guarded/direct's median is the figure issue 35 item
# 7 bounds at 1.2; relay/direct is what the extra process hop alone
# costs, guarded/relay what toolwarden adds over that hop. The upstreams:
#   bare        bareserver (Go, ours, the leanest possible): read_file
#   filesystem  npm @modelcontextprotocol/server-filesystem: read_text_file
#   everything  npm @modelcontextprotocol/server-everything: echo
#   git         PyPI mcp-server-git: git_status of a one-commit repository
#               (a tool that does work of its own: it runs git)
# each measured in its own run, all of them by default; the real servers
# are installed (pinned) by scripts/upstreams/setup-server-*.
#
# Usage (from anywhere inside the repo):
#   scripts/bench/upstream.sh
#   UPSTREAMS=bare scripts/bench/upstream.sh
#   BEFORE_BIN=/tmp/tw-old scripts/bench/upstream.sh   # an earlier build too
#
# Environment: UPSTREAMS ("bare filesystem everything git"), N (2000;
# N_GIT, 300, for git, whose calls take milliseconds),
# ROUNDS (6, or 8 with BEFORE_BIN: a multiple of the targets), WARMUP (200), TOOLWARDEN_BIN, BEFORE_BIN, TOOLWARDEN_CACHE
# (where the npm servers are installed).
set -euo pipefail

N="${N:-2000}"
ROUNDS="${ROUNDS:-$([[ -n "${BEFORE_BIN:-}" ]] && echo 8 || echo 6)}"
WARMUP="${WARMUP:-200}"
UPSTREAMS="${UPSTREAMS:-bare filesystem everything git}"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/twupbench.XXXXXX")"
bin="$tmp/bin"
ws="$tmp/ws"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

log() { printf '==> %s\n' "$*" >&2; }

log "building into $bin"
mkdir -p "$bin" "$ws"
(cd "$repo" && go build -o "$bin/" ./scripts/bench/rawload ./scripts/bench/bareserver ./scripts/bench/relay)
if [[ -n "${TOOLWARDEN_BIN:-}" ]]; then
  cp "$TOOLWARDEN_BIN" "$bin/toolwarden"
else
  (cd "$repo" && go build -o "$bin/toolwarden" ./cmd/toolwarden)
fi
[[ -z "${BEFORE_BIN:-}" ]] || cp "$BEFORE_BIN" "$bin/toolwarden-before"
head -c 3072 /dev/zero | tr '\0' 'x' | fold -w 64 >"$ws/bench.txt"
export TOOLWARDEN_LIMITS_MAX_CALLS_PER_SESSION=10000000 TOOLWARDEN_LIMITS_MAX_OUTPUT_BYTES_PER_SESSION=1099511627776
export XDG_STATE_HOME="$tmp/state"

# bench NAME TOOL ARGS COMMAND... measures one upstream. It is
# unsandboxed (the sandbox's cost is its own benchmark) and confined to
# the workspace by its own arguments; the default limits would stop a
# long run.
bench() {
  local name="$1" tool="$2" args="$3"
  shift 3
  local conf="$tmp/$name.yaml"
  {
    printf 'policy:\n  allow: [%s__%s]\n' "$name" "$tool"
    printf 'capabilities:\n  grant: ["mcp:call:%s/%s"]\n' "$name" "$tool"
    printf 'approval:\n  modes: {%s__%s: allow}\n' "$name" "$tool"
    printf 'upstreams:\n  - name: %s\n    command: [%s]\n    sandbox: false\n' "$name" "$(IFS=,; echo "$*")"
  } >"$conf"
  local targets=(--target "direct=stdio:$*" --target "relay=stdio:$bin/relay $*")
  local ratios=(--ratio guarded/relay --ratio relay/direct)
  if [[ -n "${BEFORE_BIN:-}" ]]; then
    targets+=(--target "before=stdio:env TOOLWARDEN_AUDIT_PATH=$tmp/audit-before-$name.jsonl $bin/toolwarden-before serve --workspace $ws --config $conf")
    ratios+=(--ratio before/relay --ratio guarded/before)
  fi
  targets+=(--target "guarded=stdio:env TOOLWARDEN_AUDIT_PATH=$tmp/audit-$name.jsonl $bin/toolwarden serve --workspace $ws --config $conf")
  log "$name: rawload, $ROUNDS rounds of $N calls of $tool $args"
  "$bin/rawload" "${targets[@]}" --target-tool "guarded=${name}__$tool" ${BEFORE_BIN:+--target-tool "before=${name}__$tool"} \
    --tool "$tool" --args "$args" --n "$N" --rounds "$ROUNDS" --warmup "$WARMUP" "${ratios[@]}"
}

for u in $UPSTREAMS; do
  case "$u" in
  bare) bench bare read_file '{"path":"bench.txt"}' "$bin/bareserver" --root "$ws" ;;
  filesystem)
    fs="$(cd "$repo" && scripts/upstreams/setup-server-filesystem | tail -n 1)"
    bench filesystem read_text_file "{\"path\":\"$ws/bench.txt\"}" "$fs" "$ws" ;;
  everything)
    ev="$(cd "$repo" && scripts/upstreams/setup-server-everything | tail -n 1)"
    bench everything echo '{"message":"hello upstream"}' "$ev" stdio ;;
  git)
    gitserver="$(cd "$repo" && scripts/upstreams/setup-server-git | tail -n 1)"
    git -C "$ws" init -q && git -C "$ws" add bench.txt &&
      git -C "$ws" -c user.name=bench -c user.email=bench@example.invalid -c commit.gpgsign=false commit -qm bench
    N="${N_GIT:-300}" bench git git_status "{\"repo_path\":\"$ws\"}" "$gitserver" --repository "$ws" ;;
  *) echo "upstream.sh: unknown upstream '$u' (want bare, filesystem, everything, git)" >&2; exit 2 ;;
  esac
done
