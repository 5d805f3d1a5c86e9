#!/usr/bin/env python3
"""Human-approval check for toolwarden with the official Python `mcp` SDK's elicitation callback.

Usage:
  approval_check.py stdio --cmd /path/to/toolwarden --workspace DIR [--mode legacy|2026-07-28]
  approval_check.py http  --url http://127.0.0.1:PORT/mcp --token TOKEN --workspace DIR [--mode ...]

The server must run with the default approval policy (write_file asks) and an
approval timeout of two seconds (TOOLWARDEN_APPROVAL_TIMEOUT=2s): the
timeout check answers after 4 s. `--mode legacy` uses the initialize
handshake (elicitation/create requests); a version such as 2026-07-28 uses
the stateless protocol (input_required results, retried by the SDK).

Checks, each on write_file under DIR/py-<mode>/:
  accepted     the human accepts: the file is written; the question starts with the action
  declined     the human declines: isError denied.approval_declined, nothing written
  timeout      the human answers too late: isError denied.approval_timeout, nothing written
  identical    "approve identical calls" ticked: the same call again asks again only without a session
  changed      other arguments: asked again
  unavailable  a client without an elicitation callback: isError denied.approval_unavailable

stdout: one JSON line, e.g. {"transport": "stdio", "mode": "legacy", "accepted": true, ..., "identical_asked": 1}
Exit status: 0 on success, 1 on a failed check, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import anyio

try:
    from mcp import Client, StdioServerParameters, types
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client
except ImportError as e:  # pragma: no cover
    sys.stderr.write(f"approval_check: cannot import the mcp SDK ({e}); use the python printed by scripts/pyclient/setup-venv\n")
    sys.exit(2)

try:
    import httpx2 as _httpx
except ImportError:  # pragma: no cover
    import httpx as _httpx  # type: ignore[no-redef]

LATE_ANSWER_S = 4.0


class CheckFailed(Exception):
    pass


def log(msg: str) -> None:
    print(f"approval_check: {msg}", file=sys.stderr, flush=True)


class Human:
    """The elicitation callback: answers as told, records every question."""

    def __init__(self) -> None:
        self.questions: list[str] = []
        self.action = "accept"
        self.identical = False
        self.delay = 0.0

    async def __call__(self, context: Any, params: Any) -> Any:
        self.questions.append(params.message)
        log(f"asked: {params.message.splitlines()[0]!r}")
        if self.delay:
            await anyio.sleep(self.delay)
        content = {"approve_identical": self.identical} if self.action == "accept" else None
        return types.ElicitResult(action=self.action, content=content)


def _error_code(result: Any) -> str | None:
    """The code of a toolwarden error result, from _meta (docs/errors.md);
    the text must start with the same code."""
    d = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    if not d.get("isError"):
        return None
    code = ((d.get("_meta") or {}).get("io.toolwarden/error") or {}).get("code")
    if not code:
        return "no-meta"
    texts = [c["text"] for c in d.get("content") or [] if c.get("type") == "text"]
    if not texts or not texts[0].startswith(code + ": "):
        return "text-disagrees"
    return code


async def _write(client: Any, rel: str, content: str) -> str | None:
    result = await client.call_tool("write_file", {"path": rel, "content": content, "create_dirs": True})
    return _error_code(result)


def _expect(cond: bool, what: str) -> None:
    if not cond:
        raise CheckFailed(what)


async def run_checks(connect: Any, workspace: str, mode: str, transport: str) -> dict[str, Any]:
    human = Human()
    base = f"py-{transport}-{mode.replace('-', '')}"

    def on_disk(rel: str) -> str | None:
        p = os.path.join(workspace, rel)
        return open(p).read() if os.path.exists(p) else None

    async with Client(connect(), mode=mode, elicitation_callback=human, read_timeout_seconds=30) as client:
        protocol = client.session.protocol_version
        log(f"[{transport}] connected, protocol {protocol}")

        code = await _write(client, f"{base}/approved.txt", "yes\n")
        _expect(code is None, f"accepted call failed: {code}")
        _expect(on_disk(f"{base}/approved.txt") == "yes\n", "accepted call did not write the file")
        _expect(human.questions[-1].startswith(f"Create file {base}/approved.txt"), f"question: {human.questions[-1]!r}")

        human.action = "decline"
        code = await _write(client, f"{base}/declined.txt", "no\n")
        _expect(code == "denied.approval_declined", f"declined call: {code}")
        _expect(on_disk(f"{base}/declined.txt") is None, "declined call wrote the file")

        human.action, human.delay = "accept", LATE_ANSWER_S
        code = await _write(client, f"{base}/late.txt", "late\n")
        _expect(code == "denied.approval_timeout", f"late answer: {code}")
        _expect(on_disk(f"{base}/late.txt") is None, "late answer wrote the file")
        human.delay = 0.0

        human.identical = True
        before = len(human.questions)
        for _ in range(2):
            code = await _write(client, f"{base}/same.txt", "v1\n")
            _expect(code is None, f"identical call: {code}")
        identical_asked = len(human.questions) - before
        code = await _write(client, f"{base}/same.txt", "v2\n")
        _expect(code is None, f"changed call: {code}")
        changed_asked = len(human.questions) - before - identical_asked
        _expect(changed_asked == 1, "changed arguments were not asked again")
        _expect(on_disk(f"{base}/same.txt") == "v2\n", "changed call did not write")

    async with Client(connect(), mode=mode, read_timeout_seconds=30) as client:
        code = await _write(client, f"{base}/unasked.txt", "x\n")
        _expect(code == "denied.approval_unavailable", f"client without elicitation: {code}")
        _expect(on_disk(f"{base}/unasked.txt") is None, "a client without elicitation wrote the file")

    return {"transport": transport, "mode": mode, "protocol": protocol, "accepted": True, "declined": True,
            "timeout": True, "unavailable": True, "changed_asked_again": True, "identical_asked": identical_asked}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Check toolwarden's human approval with the Python MCP SDK.")
    sub = ap.add_subparsers(dest="transport", required=True)
    p_stdio = sub.add_parser("stdio")
    p_stdio.add_argument("--cmd", required=True)
    p_http = sub.add_parser("http")
    p_http.add_argument("--url", required=True)
    p_http.add_argument("--token", required=True)
    for p in (p_stdio, p_http):
        p.add_argument("--workspace", required=True)
        p.add_argument("--mode", default="legacy", help="legacy, or a protocol version such as 2026-07-28")
    args = ap.parse_args(argv)

    if args.transport == "stdio":
        params = StdioServerParameters(command=args.cmd, args=["serve", "--workspace", args.workspace], env=dict(os.environ))

        def connect() -> Any:
            return stdio_client(params)

        http_client = None
    else:
        http_client = _httpx.AsyncClient(headers={"Authorization": f"Bearer {args.token}"}, timeout=_httpx.Timeout(30.0))

        def connect() -> Any:
            return streamable_http_client(args.url, http_client=http_client)

    async def go() -> dict[str, Any]:
        with anyio.fail_after(120):
            try:
                return await run_checks(connect, args.workspace, args.mode, args.transport)
            finally:
                if http_client is not None:
                    await http_client.aclose()

    try:
        summary = anyio.run(go)
    except BaseException as e:  # noqa: BLE001 - any failure is a failed check
        while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
            e = e.exceptions[0]
        print(f"approval_check: FAIL {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        return 1
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
