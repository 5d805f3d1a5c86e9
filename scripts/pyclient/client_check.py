#!/usr/bin/env python3
"""Third-party MCP client check for toolwarden, using the official Python `mcp` SDK.

Usage:
  client_check.py stdio --cmd /path/to/toolwarden --workspace DIR
  client_check.py http  --url http://127.0.0.1:PORT/mcp --token TOKEN [--sse-url http://127.0.0.1:PORT/sse]

For each transport it: initializes; lists tools; asserts `read_file` is listed with an
inputSchema and an outputSchema; calls read_file {"path": "hello.txt"} and asserts the
result is not an error and contains "hello from toolwarden"; calls read_file
{"path": "../outside.txt"} and asserts isError is true.

stdout carries only one JSON summary line per transport checked, e.g.
  {"transport": "stdio", "tools": 3, "read_file": "ok", "escape_denied": true}
Diagnostics go to stderr. Exit status: 0 on success, 1 on a failed check, 2 on bad usage.

Run it with the interpreter printed by scripts/pyclient/setup-venv (pins the SDK).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import anyio

try:
    import mcp
    from mcp import ClientSession, StdioServerParameters, types
    from mcp.client.sse import sse_client
    from mcp.client.stdio import stdio_client
except ImportError as e:  # pragma: no cover
    sys.stderr.write(
        f"client_check: cannot import the mcp SDK ({e}); run it with the python printed by "
        "scripts/pyclient/setup-venv\n"
    )
    sys.exit(2)

# mcp 2.x names it MCPError; 1.x McpError. Both carry .error (ErrorData with code/message).
MCPError: type[Exception] = getattr(mcp, "MCPError", None) or getattr(mcp, "McpError")

try:  # mcp 2.x
    from mcp.client.streamable_http import streamable_http_client as _streamable_http_client
except ImportError:  # older 1.x
    _streamable_http_client = None  # type: ignore[assignment]
    from mcp.client.streamable_http import streamablehttp_client as _streamablehttp_client_legacy

try:  # mcp 2.x depends on httpx2, 1.x on httpx
    import httpx2 as _httpx
except ImportError:  # pragma: no cover
    import httpx as _httpx  # type: ignore[no-redef]

TOOL = "read_file"
EXPECTED_TEXT = "hello from toolwarden"
OK_ARGS = {"path": "hello.txt"}
ESCAPE_ARGS = {"path": "../outside.txt"}
ESCAPE_CODE = "invalid_argument.path_outside_workspace"
ERROR_META_KEY = "io.toolwarden/error"

# Per-request read timeout and an overall bound per transport, so a hung server
# fails the check instead of hanging the caller.
REQUEST_TIMEOUT_S = 30.0
TRANSPORT_TIMEOUT_S = 90.0

CLIENT_INFO = types.Implementation(name="toolwarden-pyclient-check", version="1")


class CheckFailed(Exception):
    """An assertion about the server's behaviour did not hold."""


def log(msg: str) -> None:
    print(f"client_check: {msg}", file=sys.stderr, flush=True)


def _dump(model: Any) -> dict[str, Any]:
    """Wire-shaped (camelCase) dict of an SDK model, independent of SDK attribute naming."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def _texts(result: dict[str, Any]) -> list[str]:
    return [c.get("text", "") for c in result.get("content") or [] if c.get("type") == "text"]


async def _call(session: ClientSession, args: dict[str, Any], transport: str) -> dict[str, Any]:
    try:
        result = await session.call_tool(TOOL, args)
    except MCPError as e:
        raise CheckFailed(
            f"[{transport}] tools/call {TOOL} {json.dumps(args)} returned a JSON-RPC error "
            f"(code {e.error.code}: {e.error.message}); expected a CallToolResult"
        ) from e
    except RuntimeError as e:
        # The SDK validates structuredContent against the tool's outputSchema and raises RuntimeError.
        raise CheckFailed(f"[{transport}] tools/call {TOOL} {json.dumps(args)}: SDK rejected the result: {e}") from e
    return _dump(result)


async def run_checks(session: ClientSession, transport: str) -> dict[str, Any]:
    init = await session.initialize()
    init_d = _dump(init)
    log(
        f"[{transport}] initialized: protocolVersion={init_d.get('protocolVersion')} "
        f"server={json.dumps(init_d.get('serverInfo'))} capabilities={json.dumps(init_d.get('capabilities'))}"
    )

    # tools/list, following pagination cursors.
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(100):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = _dump(await session.list_tools(params=params))
        tools.extend(page.get("tools") or [])
        cursor = page.get("nextCursor")
        if not cursor:
            break
    names = [t.get("name") for t in tools]
    log(f"[{transport}] tools/list: {names}")
    tool = next((t for t in tools if t.get("name") == TOOL), None)
    if tool is None:
        raise CheckFailed(f"[{transport}] tool {TOOL!r} not in tools/list: {names}")
    if not isinstance(tool.get("inputSchema"), dict) or not tool["inputSchema"]:
        raise CheckFailed(f"[{transport}] tool {TOOL!r} has no inputSchema: {json.dumps(tool)}")
    if not isinstance(tool.get("outputSchema"), dict) or not tool["outputSchema"]:
        raise CheckFailed(f"[{transport}] tool {TOOL!r} has no outputSchema: {json.dumps(tool)}")

    # Happy path.
    ok = await _call(session, OK_ARGS, transport)
    if ok.get("isError"):
        raise CheckFailed(f"[{transport}] {TOOL} {json.dumps(OK_ARGS)} returned isError=true: {json.dumps(ok)}")
    in_text = any(EXPECTED_TEXT in t for t in _texts(ok))
    structured = ok.get("structuredContent")
    in_structured = structured is not None and EXPECTED_TEXT in json.dumps(structured, ensure_ascii=False)
    if not (in_text or in_structured):
        raise CheckFailed(f"[{transport}] {TOOL} {json.dumps(OK_ARGS)}: {EXPECTED_TEXT!r} not in result: {json.dumps(ok)}")
    log(f"[{transport}] {TOOL} hello.txt ok (in text content: {in_text}, in structuredContent: {in_structured})")

    # Workspace escape must be refused as a tool error.
    denied = await _call(session, ESCAPE_ARGS, transport)
    msg = " | ".join(_texts(denied)) or json.dumps(denied)
    if denied.get("isError") is not True:
        raise CheckFailed(
            f"[{transport}] {TOOL} {json.dumps(ESCAPE_ARGS)} was not refused (isError is not true): {json.dumps(denied)}"
        )
    # The coded error reaches both the program (_meta) and the model (the
    # text says code, hint and rule), and the SDK did not turn it into an
    # exception: docs/errors.md.
    coded = (denied.get("_meta") or {}).get(ERROR_META_KEY) or {}
    code = coded.get("code")
    if code != ESCAPE_CODE or not coded.get("hint"):
        raise CheckFailed(f"[{transport}] {TOOL} escape: _meta[{ERROR_META_KEY!r}] = {coded!r}, want code {ESCAPE_CODE} and a hint")
    first = _texts(denied)[0] if _texts(denied) else ""
    if not first.startswith(ESCAPE_CODE + ": ") or "\nHint: " + coded["hint"] not in first:
        raise CheckFailed(f"[{transport}] {TOOL} escape: the text does not say the code and hint: {first!r}")
    log(f"[{transport}] {TOOL} ../outside.txt denied as expected: {msg}")

    return {"transport": transport, "tools": len(tools), "read_file": "ok", "escape_denied": True}


async def _with_session(streams: Any, transport: str) -> dict[str, Any]:
    read_stream, write_stream = streams[0], streams[1]  # 1.x streamable HTTP yields a 3-tuple
    timeout: Any = REQUEST_TIMEOUT_S
    if _SDK_MAJOR < 2:  # 1.x takes a timedelta here
        from datetime import timedelta

        timeout = timedelta(seconds=REQUEST_TIMEOUT_S)
    async with ClientSession(read_stream, write_stream, read_timeout_seconds=timeout, client_info=CLIENT_INFO) as session:
        return await run_checks(session, transport)


async def check_stdio(cmd: str, workspace: str) -> dict[str, Any]:
    params = StdioServerParameters(
        command=cmd,
        args=["serve", "--workspace", workspace],
        env=dict(os.environ),  # pass the whole current environment through to the server
    )
    log(f"[stdio] launching: {cmd} serve --workspace {workspace}")
    async with stdio_client(params) as streams:
        return await _with_session(streams, "stdio")


def _auth_headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# Non-2xx HTTP responses seen, so a failure can say "HTTP 401 on POST ..." instead of the
# SDK's generic "Server returned an error response".
HTTP_ERRORS: list[str] = []


async def _record_http_error(response: Any) -> None:
    if response.status_code >= 400:
        HTTP_ERRORS.append(f"HTTP {response.status_code} on {response.request.method} {response.request.url}")


def _http_client(headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None) -> Any:
    """An httpx client carrying our headers; signature matches the SDK's McpHttpClientFactory."""
    if timeout is None:
        timeout = _httpx.Timeout(REQUEST_TIMEOUT_S, read=REQUEST_TIMEOUT_S * 2)
    kwargs: dict[str, Any] = {"headers": headers, "timeout": timeout, "event_hooks": {"response": [_record_http_error]}}
    if auth is not None:
        kwargs["auth"] = auth
    return _httpx.AsyncClient(**kwargs)


async def check_streamable_http(url: str, token: str) -> dict[str, Any]:
    log(f"[streamable-http] connecting to {url}")
    if _streamable_http_client is None:  # pragma: no cover - 1.x fallback
        async with _streamablehttp_client_legacy(url, headers=_auth_headers(token)) as streams:
            return await _with_session(streams, "streamable-http")
    # The SDK takes headers via a caller-supplied HTTP client; it adds Accept,
    # Content-Type, Mcp-Session-Id and MCP-Protocol-Version itself.
    async with _http_client(headers=_auth_headers(token)) as http_client:
        async with _streamable_http_client(url, http_client=http_client) as streams:
            return await _with_session(streams, "streamable-http")


async def check_sse(url: str, token: str) -> dict[str, Any]:
    log(f"[sse] connecting to {url}")
    async with sse_client(
        url, headers=_auth_headers(token), timeout=REQUEST_TIMEOUT_S, httpx_client_factory=_http_client
    ) as streams:
        return await _with_session(streams, "sse")


def _find_check_failed(exc: BaseException) -> CheckFailed | None:
    """Dig a CheckFailed out of (possibly nested) exception groups raised by anyio task groups."""
    if isinstance(exc, CheckFailed):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            found = _find_check_failed(sub)
            if found is not None:
                return found
    return None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    if isinstance(exc, MCPError):
        return f"MCPError (code {exc.error.code}): {exc.error.message}"
    return f"{type(exc).__name__}: {exc}"


async def _bounded(coro_fn: Any, *args: Any, label: str) -> dict[str, Any]:
    try:
        with anyio.fail_after(TRANSPORT_TIMEOUT_S):
            return await coro_fn(*args)
    except TimeoutError as e:
        raise CheckFailed(f"[{label}] timed out after {TRANSPORT_TIMEOUT_S:.0f}s") from e


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Check a toolwarden MCP server with the official Python MCP SDK.")
    sub = ap.add_subparsers(dest="mode", required=True)
    p_stdio = sub.add_parser("stdio", help="launch `CMD serve --workspace DIR` and talk MCP over stdio")
    p_stdio.add_argument("--cmd", required=True, help="path to the toolwarden binary")
    p_stdio.add_argument("--workspace", required=True, help="workspace directory (must hold hello.txt)")
    p_http = sub.add_parser("http", help="connect to a running server over streamable HTTP (and optionally SSE)")
    p_http.add_argument("--url", required=True, help="streamable HTTP endpoint, e.g. http://127.0.0.1:PORT/mcp")
    p_http.add_argument("--token", required=True, help="bearer token sent as `Authorization: Bearer TOKEN`")
    p_http.add_argument("--sse-url", help="also check the legacy SSE transport at this URL, e.g. .../sse")
    args = ap.parse_args(argv)

    log(f"using mcp SDK {_sdk_version()} on Python {sys.version.split()[0]}")
    plan: list[tuple[str, Any, tuple[Any, ...]]] = []
    if args.mode == "stdio":
        plan.append(("stdio", check_stdio, (args.cmd, args.workspace)))
    else:
        plan.append(("streamable-http", check_streamable_http, (args.url, args.token)))
        if args.sse_url:
            plan.append(("sse", check_sse, (args.sse_url, args.token)))

    for label, fn, fn_args in plan:
        try:
            summary = anyio.run(lambda: _bounded(fn, *fn_args, label=label))
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: BLE001 - report anything as a failed check
            failed = _find_check_failed(e)
            reason = str(failed) if failed is not None else f"[{label}] {_describe(e)}"
            if HTTP_ERRORS:
                reason += " (HTTP errors seen: " + "; ".join(HTTP_ERRORS[-3:]) + ")"
            reason = " ".join(reason.split())  # keep the FAIL message on one line
            print(f"client_check: FAIL {reason}", file=sys.stderr, flush=True)
            return 1
        print(json.dumps(summary), flush=True)
    return 0


def _sdk_version() -> str:
    try:
        from importlib.metadata import version

        return version("mcp")
    except Exception:  # pragma: no cover
        return "unknown"


try:
    _SDK_MAJOR = int(_sdk_version().split(".")[0])
except ValueError:  # pragma: no cover
    _SDK_MAJOR = 2


if __name__ == "__main__":
    sys.exit(main())
