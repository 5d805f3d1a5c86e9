#!/usr/bin/env python3
"""OAuth discovery check for toolwarden, using the official Python `mcp` SDK.

Usage:
  oauth_check.py --url http://127.0.0.1:PORT/mcp --issuer ISSUER \
      --client-id ID --client-secret-env VAR --scope "mcp:tools"

The SDK's ClientCredentialsOAuthProvider does the whole discovery the MCP
authorization spec describes, starting with no token: the server's 401 and
its WWW-Authenticate resource_metadata, the protected-resource metadata
(RFC 9728), the authorization server's metadata, the client_credentials
token, and the retried MCP requests. The script then lists the tools and
calls read_file {"path": "hello.txt"}.

One shim: the SDK names the resource with RFC 8707's `resource` parameter,
which Ory Hydra ignores; Hydra takes the audience from `audience`, so the
token request also carries audience=<the same resource>.

stdout: one JSON line, e.g.
  {"tools": ["read_file", ...], "read_file": "ok", "requests": ["POST /mcp 401", ...]}
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
    import httpx2 as httpx
    from mcp import ClientSession, types
    from mcp.client.auth import TokenStorage
    from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
except ImportError as e:  # pragma: no cover
    sys.stderr.write(f"oauth_check: cannot import the mcp SDK 2.x ({e}); use scripts/pyclient/setup-venv's python\n")
    sys.exit(2)

TIMEOUT_S = 60.0


class MemoryStorage(TokenStorage):
    """Keeps the token and client in memory: every run starts undiscovered."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class AudienceProvider(ClientCredentialsOAuthProvider):
    """Adds Hydra's `audience` beside RFC 8707's `resource`."""

    async def _exchange_token_client_credentials(self) -> httpx.Request:
        req = await super()._exchange_token_client_credentials()
        form = dict(httpx.QueryParams(req.content.decode()))
        if "resource" in form:
            form["audience"] = form["resource"]
        return httpx.Request("POST", req.url, data=form, headers={k: v for k, v in req.headers.items() if k.lower() != "content-length"})


async def run(args: argparse.Namespace) -> dict[str, Any]:
    secret = os.environ.get(args.client_secret_env, "")
    if not secret:
        raise SystemExit(f"oauth_check: {args.client_secret_env} is empty")
    provider = AudienceProvider(
        server_url=args.url, storage=MemoryStorage(), client_id=args.client_id, client_secret=secret,
        scope=args.scope, issuer=args.issuer,
    )
    requests: list[str] = []

    async def record(response: Any) -> None:
        requests.append(f"{response.request.method} {response.request.url.path} {response.status_code}")

    with anyio.fail_after(TIMEOUT_S * 2):
        return await _discover_and_call(args, provider, requests, record)


async def _discover_and_call(args: argparse.Namespace, provider: Any, requests: list[str], record: Any) -> dict[str, Any]:
    async with httpx.AsyncClient(auth=provider, timeout=TIMEOUT_S, event_hooks={"response": [record]}) as http:
        async with streamable_http_client(args.url, http_client=http) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write, client_info=types.Implementation(name="oauth-check", version="1")) as s:
                await s.initialize()
                tools = [t.name for t in (await s.list_tools()).tools]
                res = await s.call_tool("read_file", {"path": "hello.txt"})
                text = "".join(c.text for c in res.content if isinstance(c, types.TextContent))
                ok = not res.is_error and "hello from toolwarden" in text
    return {"tools": sorted(tools), "read_file": "ok" if ok else f"failed: {text[:200]}", "requests": requests}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--issuer", required=True)
    ap.add_argument("--client-id", required=True)
    ap.add_argument("--client-secret-env", required=True)
    ap.add_argument("--scope", default="mcp:tools")
    args = ap.parse_args()
    try:
        out = anyio.run(run, args)
    except Exception as e:  # noqa: BLE001 - reported, not hidden
        print(f"oauth_check: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(json.dumps(out))
    return 0 if out["read_file"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
