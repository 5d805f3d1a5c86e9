'use strict';
// OAuth discovery with the official TypeScript MCP SDK
// (@modelcontextprotocol/sdk, installed by scripts/clients/setup-ts-sdk):
// given only the server's URL and client credentials, the SDK's
// ClientCredentialsProvider follows the server's 401 to its
// protected-resource metadata (RFC 9728), the authorization server's
// metadata, gets a client_credentials token and retries; the script then
// lists the tools and calls read_file {"path": "hello.txt"}.
//
// One shim: the SDK names the resource with RFC 8707's `resource`
// parameter, which Ory Hydra ignores; Hydra takes the audience from
// `audience`, so the token request also carries audience=URL.
// Usage:
//   CLIENT_SECRET=... node check.cjs SDK_PREFIX URL ISSUER CLIENT_ID SCOPE
// Prints one JSON line {tools, read_file, requests}; exits 1 on failure.
const path = require('node:path');
const { createRequire } = require('node:module');

const [prefixArg, url, issuer, clientId, scope] = process.argv.slice(2);
const sdk = createRequire(path.join(path.resolve(prefixArg), 'node_modules', '.resolve.js'));
const { Client } = sdk('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = sdk('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { ClientCredentialsProvider } = sdk('@modelcontextprotocol/sdk/client/auth-extensions.js');
const { UnauthorizedError } = sdk('@modelcontextprotocol/sdk/client/auth.js');

class AudienceProvider extends ClientCredentialsProvider {
  prepareTokenRequest(s) {
    const params = super.prepareTokenRequest(s);
    params.set('audience', url);
    return params;
  }
}

async function main() {
  const requests = [];
  const fetchFn = async (input, init) => {
    const res = await fetch(input, init);
    const u = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    requests.push(`${(init && init.method) || 'GET'} ${u.pathname} ${res.status}`);
    return res;
  };
  const provider = new AudienceProvider({ clientId, clientSecret: process.env.CLIENT_SECRET, scope, expectedIssuer: issuer });
  const connect = async () => {
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: fetchFn });
    const client = new Client({ name: 'oauth-ts-check', version: '1' });
    await client.connect(transport);
    return client;
  };
  let client;
  try {
    client = await connect();
  } catch (e) {
    // Older SDKs end the first attempt after the token exchange; retry once.
    if (!(e instanceof UnauthorizedError)) throw e;
    client = await connect();
  }
  const tools = (await client.listTools()).tools.map((t) => t.name).sort();
  const res = await client.callTool({ name: 'read_file', arguments: { path: 'hello.txt' } });
  const text = (res.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');
  const ok = !res.isError && text.includes('hello from toolwarden');
  await client.close();
  console.log(JSON.stringify({ tools, read_file: ok ? 'ok' : `failed: ${text.slice(0, 200)}`, requests }));
  process.exit(ok ? 0 : 1);
}

main().catch((e) => {
  console.error(`oauth-ts check: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
