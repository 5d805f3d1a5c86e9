#!/usr/bin/env python3
"""Approval-page check for toolwarden with the official Python `mcp` SDK.

Usage:
  page_check.py --cmd /path/to/toolwarden --workspace DIR

Starts `toolwarden serve --approval-page` over stdio with a Python SDK client
that has no elicitation callback (so it cannot elicit), reads the page's
one-time URL from the server's stderr, and plays the human on the page with
an HTTP client: it logs in with the URL, reads the waiting call's card,
and posts the page's own form from the page's origin.

Checks, each on write_file under DIR/py-page/:
  approved   Approve on the page: the call succeeds and the file is written;
             the card shows the exact path and content
  denied     Deny on the page: isError denied.approval_declined, nothing written
  forged     a POST from another origin: refused (403), the call still waits

stdout: one JSON line, e.g. {"approved": true, "denied": true, "forged_refused": true}
Exit status: 0 on success, 1 on a failed check, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import sys
import tempfile
from typing import Any

import anyio

try:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client
except ImportError as e:  # pragma: no cover
    sys.stderr.write(f"page_check: cannot import the mcp SDK ({e}); use the python printed by scripts/pyclient/setup-venv\n")
    sys.exit(2)

try:
    import httpx2 as _httpx
except ImportError:  # pragma: no cover
    import httpx as _httpx  # type: ignore[no-redef]

FIELD = re.compile(r'name="(id|digest|csrf)" value="([^"]+)"')


class CheckFailed(Exception):
    pass


def _expect(cond: bool, what: str) -> None:
    if not cond:
        raise CheckFailed(what)


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


async def _page_url(errlog: Any) -> str:
    for _ in range(600):
        errlog.seek(0)
        for line in errlog.read().splitlines():
            if line.startswith("http://127.0.0.1:"):
                return line.strip()
        await anyio.sleep(0.05)
    raise CheckFailed("serve printed no approval page URL")


async def _card(page: Any, session: str) -> tuple[dict[str, str], str]:
    """Waits for the first waiting call's card on the session's page (its
    own path, the only one its cookie is sent to): its form fields and the page."""
    for _ in range(600):
        body = (await page.get(session)).text
        fields: dict[str, str] = {}
        for name, value in FIELD.findall(body):
            fields.setdefault(name, html.unescape(value))
        if "csrf" in fields:
            return fields, body
        await anyio.sleep(0.05)
    raise CheckFailed("no card appeared on the page")


async def _decide(page: Any, session: str, origin: str, fields: dict[str, str], action: str) -> int:
    r = await page.post(session + "decide", data={**fields, "action": action}, headers={"Origin": origin})
    return r.status_code


async def run_checks(cmd: str, workspace: str) -> dict[str, Any]:
    base = "py-page"

    def on_disk(rel: str) -> str | None:
        p = os.path.join(workspace, rel)
        return open(p).read() if os.path.exists(p) else None

    errlog = tempfile.TemporaryFile("w+")
    params = StdioServerParameters(command=cmd, args=["serve", "--approval-page", "--workspace", workspace], env=dict(os.environ))
    async with Client(stdio_client(params, errlog=errlog), mode="legacy", read_timeout_seconds=60) as client:
        url = await _page_url(errlog)
        origin = url.split("/login", 1)[0]
        async with _httpx.AsyncClient(base_url=origin, follow_redirects=False, timeout=30) as page:
            r = await page.get(url)
            _expect(r.status_code == 303, f"login: HTTP {r.status_code}")
            session = r.headers["location"]
            results: dict[str, Any] = {}

            async def call(rel: str, content: str) -> None:
                res = await client.call_tool("write_file", {"path": rel, "content": content, "create_dirs": True})
                results[rel] = _error_code(res)

            async with anyio.create_task_group() as tg:
                tg.start_soon(call, f"{base}/yes.txt", "<b>approved</b> on the page\n")
                fields, body = await _card(page, session)
                _expect(f"Create file {base}/yes.txt" in body, "the card does not show the path")
                _expect("&lt;b&gt;approved&lt;/b&gt; on the page" in body and "<b>approved" not in body,
                        "the card does not show the content, escaped")
                code = await _decide(page, session, "http://evil.example", fields, "approve")
                _expect(code == 403, f"cross-origin decision: HTTP {code}")
                _expect(f"{base}/yes.txt" not in results, "a cross-origin decision settled the call")
                code = await _decide(page, session, origin, fields, "approve")
                _expect(code == 303, f"approve: HTTP {code}")
            _expect(results[f"{base}/yes.txt"] is None, f"approved call: {results[f'{base}/yes.txt']}")
            _expect(on_disk(f"{base}/yes.txt") == "<b>approved</b> on the page\n", "approved call did not write the file")

            async with anyio.create_task_group() as tg:
                tg.start_soon(call, f"{base}/no.txt", "no\n")
                fields, _ = await _card(page, session)
                code = await _decide(page, session, origin, fields, "deny")
                _expect(code == 303, f"deny: HTTP {code}")
            _expect(results[f"{base}/no.txt"] == "denied.approval_declined", f"denied call: {results[f'{base}/no.txt']}")
            _expect(on_disk(f"{base}/no.txt") is None, "denied call wrote the file")
    return {"approved": True, "denied": True, "forged_refused": True}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Check toolwarden's approval page with the Python MCP SDK.")
    ap.add_argument("--cmd", required=True)
    ap.add_argument("--workspace", required=True)
    args = ap.parse_args(argv)

    async def go() -> dict[str, Any]:
        with anyio.fail_after(120):
            return await run_checks(args.cmd, args.workspace)

    try:
        summary = anyio.run(go)
    except BaseException as e:  # noqa: BLE001 - any failure is a failed check
        while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
            e = e.exceptions[0]
        print(f"page_check: FAIL {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        return 1
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
