'use strict';
// Drives a toolwarden server that offers an upstream MCP server's tools
// with the official TypeScript MCP SDK (installed by
// scripts/clients/setup-ts-sdk), as a client that declares elicitation
// and accepts every question: it lists the tools, reads with
// READ_TOOL READ_ARGS, and writes with WRITE_TOOL WRITE_ARGS, which
// toolwarden must ask about first. The Go test (e2e's
// TestTypeScriptSDKUpstream) judges the summary.
// Usage:
//   node upstream.cjs SDK_PREFIX BINARY WORKSPACE CONFIG READ_TOOL READ_ARGS WRITE_TOOL WRITE_ARGS
// Prints one JSON summary line on stdout:
//   {sdk, tools: [names], read: {isError, text}, write: {isError, text},
//    questions: [message]}
const path = require('node:path');
const { createRequire } = require('node:module');

const [prefixArg, binary, workspace, config, readTool, readArgs, writeTool, writeArgs] = process.argv.slice(2);
const prefix = path.resolve(prefixArg);
const sdk = createRequire(path.join(prefix, 'node_modules', '.resolve.js'));
const { Client } = sdk('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = sdk('@modelcontextprotocol/sdk/client/stdio.js');
const { ElicitRequestSchema } = sdk('@modelcontextprotocol/sdk/types.js');
const sdkVersion = JSON.parse(require('node:fs').readFileSync(path.join(prefix, 'node_modules/@modelcontextprotocol/sdk/package.json'), 'utf8')).version;

// text joins a result's text content.
function text(res) {
  return (res.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

async function main() {
  const out = { sdk: sdkVersion, tools: [], questions: [] };
  const client = new Client({ name: 'toolwarden-ts-upstream', version: '1' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    out.questions.push(String(req.params.message));
    return { action: 'accept', content: {} };
  });
  await client.connect(new StdioClientTransport({
    command: binary,
    args: ['serve', '--workspace', workspace, '--config', config],
    env: process.env,
    stderr: 'inherit',
  }));
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    out.tools.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  for (const [key, name, args] of [['read', readTool, readArgs], ['write', writeTool, writeArgs]]) {
    const res = await client.callTool({ name, arguments: JSON.parse(args) });
    out[key] = { isError: Boolean(res.isError), text: text(res) };
  }
  await client.close();
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
