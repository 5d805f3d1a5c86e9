'use strict';
// Drives a toolwarden server with the official TypeScript MCP SDK
// (@modelcontextprotocol/sdk, installed by scripts/clients/setup-ts-sdk)
// and checks what TypeScript-based clients (Gemini CLI, Claude Code, the
// Inspector) rely on:
//   - every tool's input and output schema compiles with ajv (strict, JSON
//     Schema 2020-12, the MCP default dialect);
//   - every successful result passes the SDK's own output-schema check and
//     validates against the tool's outputSchema here too;
//   - every error result passes the SDK (no -32602), carries
//     _meta["io.toolwarden/error"] {code, message, hint, rule}, and its
//     first text says the same and is not a JSON object (a client that
//     copies such a text into structuredContent, as Gemini CLI does, would
//     fail it against the output schema: docs/errors.md);
//   - run_script, when listed, runs a 5 s script and the SDK accepts the
//     progress notifications it asked for;
//   - a second client that declares elicitation and accepts every
//     question calls write_file (the Go test says where it must be asked).
// Usage:
//   node check.cjs SDK_PREFIX stdio BINARY WORKSPACE
//   node check.cjs SDK_PREFIX streamable-http URL TOKEN
//   node check.cjs SDK_PREFIX sse URL TOKEN
// Prints one JSON summary line on stdout; exits 1 when a check failed.
const path = require('node:path');
const { createRequire } = require('node:module');

const [prefixArg, transportName, arg1, arg2] = process.argv.slice(2);
const prefix = path.resolve(prefixArg);
const sdk = createRequire(path.join(prefix, 'node_modules', '.resolve.js'));
const { Client } = sdk('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = sdk('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = sdk('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { SSEClientTransport } = sdk('@modelcontextprotocol/sdk/client/sse.js');
const { ElicitRequestSchema } = sdk('@modelcontextprotocol/sdk/types.js');
const Ajv2020 = sdk('ajv/dist/2020').default;
const addFormats = sdk('ajv-formats').default;
const sdkVersion = JSON.parse(require('node:fs').readFileSync(path.join(prefix, 'node_modules/@modelcontextprotocol/sdk/package.json'), 'utf8')).version;

const ERROR_META_KEY = 'io.toolwarden/error';

// Calls that succeed on a workspace holding hello.txt, and calls that must
// fail with a known code. Every tool is also called with {}: a schema
// error, or a success for tools whose arguments are all optional.
const SAMPLES = [
  ['read_file', { path: 'hello.txt' }],
  ['read_file', { path: '../outside.txt' }, 'invalid_argument.path_outside_workspace'],
  ['read_multiple_files', { paths: ['hello.txt', 'missing.txt'] }],
  ['list_directory', { path: '.' }],
  ['directory_tree', { path: '.' }],
  ['file_info', { path: 'hello.txt' }],
  ['search_files', { pattern: '*.txt' }],
  ['grep_files', { pattern: 'hello' }],
  ['write_file', { path: 'new.txt', content: 'x' }, 'denied.approval_unavailable'],
  ['file_info', { path: 'missing.txt' }, 'not_found'],
];

function transport() {
  const headers = { Authorization: 'Bearer ' + arg2 };
  switch (transportName) {
    case 'stdio':
      return new StdioClientTransport({
        command: arg1,
        args: ['serve', '--workspace', arg2, ...(process.env.TOOLWARDEN_TS_SERVE_ARGS || '').split(' ').filter(Boolean)],
        env: process.env,
        stderr: 'inherit',
      });
    case 'streamable-http':
      return new StreamableHTTPClientTransport(new URL(arg1), { requestInit: { headers } });
    case 'sse':
      return new SSEClientTransport(new URL(arg1), {
        requestInit: { headers },
        eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...(init && init.headers), ...headers } }) },
      });
  }
  throw new Error('unknown transport ' + transportName);
}

function compile(ajv, schema) {
  try {
    return { validate: ajv.compile(schema) };
  } catch (e) {
    return { error: String(e.message || e) };
  }
}

// checkError returns what is wrong with an error result, or null.
function checkError(res, wantCode) {
  const coded = (res._meta || {})[ERROR_META_KEY];
  if (!coded || !coded.code || !coded.message) return `no ${ERROR_META_KEY} in _meta: ${JSON.stringify(res)}`;
  if (wantCode && coded.code !== wantCode) return `code ${coded.code}, want ${wantCode}`;
  if (res.structuredContent !== undefined) return 'an error result has structuredContent';
  const text = (res.content || []).find((c) => c.type === 'text');
  if (!text) return 'no text content';
  if (!text.text.startsWith(coded.code + ': ' + coded.message)) return `text does not start with code and message: ${text.text}`;
  if (coded.hint && !text.text.includes('\nHint: ' + coded.hint)) return `text lacks the hint: ${text.text}`;
  if (coded.rule && !text.text.includes('\nRule: ' + coded.rule)) return `text lacks the rule: ${text.text}`;
  try {
    const v = JSON.parse(text.text);
    if (v && typeof v === 'object') return 'the text is a JSON object: Gemini CLI would copy it into structuredContent';
  } catch (_) {
    // Not JSON: what we want.
  }
  return null;
}

// runScript runs a script long enough for the server to report progress
// (every 2 s), asking for it, and returns what came back.
async function runScript(client, validate, fail) {
  let progress = 0;
  const res = await client.callTool({ name: 'run_script', arguments: { interpreter: 'bash', script: 'sleep 5; echo ran' } }, undefined, {
    onprogress: () => progress++,
    timeout: 60000,
  });
  const sc = res.structuredContent || {};
  if (res.isError || !String(sc.stdout).includes('ran')) fail(`run_script: ${JSON.stringify(res)}`);
  else if (validate && !validate(sc)) fail('run_script: structuredContent fails the outputSchema');
  return { ran: !res.isError && String(sc.stdout).includes('ran'), exitCode: sc.exit_code, progress };
}

// elicit connects a client that accepts every elicitation and writes a
// file through the approval; it returns how many questions were asked and
// the write's error code ('' when it ran). The caller judges: toolwarden
// cannot ask over every transport.
async function elicit(fail) {
  const client = new Client({ name: 'toolwarden-ts-check-elicit', version: '1' }, { capabilities: { elicitation: {} } });
  let asked = 0;
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked++;
    if (!String(req.params.message).includes('write_file')) fail(`the question does not name the tool: ${req.params.message}`);
    return { action: 'accept', content: {} };
  });
  await client.connect(transport());
  const res = await client.callTool({ name: 'write_file', arguments: { path: `approved-${transportName}.txt`, content: 'yes\n' } });
  let code = '';
  if (res.isError) {
    const problem = checkError(res);
    if (problem) fail(`write_file with elicitation: ${problem}`);
    code = ((res._meta || {})[ERROR_META_KEY] || {}).code || 'uncoded';
  }
  await client.close();
  return { asked, code };
}

async function main() {
  const out = { transport: transportName, sdk: sdkVersion, tools: 0, schemas: 0, successes: 0, validated: 0, errors: [], failures: [] };
  const fail = (msg) => out.failures.push(msg);
  const client = new Client({ name: 'toolwarden-ts-check', version: '1' }, { capabilities: {} });
  await client.connect(transport());

  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  out.tools = tools.length;

  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  const outputs = {};
  for (const t of tools) {
    for (const [kind, schema] of [['inputSchema', t.inputSchema], ['outputSchema', t.outputSchema]]) {
      if (!schema) continue;
      const c = compile(ajv, schema);
      if (c.error) fail(`${t.name} ${kind} does not compile: ${c.error}`);
      else out.schemas++;
      if (kind === 'outputSchema' && c.validate) outputs[t.name] = c.validate;
    }
  }

  const calls = SAMPLES.concat(tools.map((t) => [t.name, {}]));
  for (const [name, args, wantCode] of calls) {
    if (!tools.some((t) => t.name === name)) continue;
    const what = `${name} ${JSON.stringify(args)}`;
    let res;
    try {
      res = await client.callTool({ name, arguments: args });
    } catch (e) {
      fail(`${what}: the SDK threw: ${e.message}`);
      continue;
    }
    if (res.isError) {
      const problem = checkError(res, wantCode);
      if (problem) fail(`${what}: ${problem}`);
      else {
        const e = res._meta[ERROR_META_KEY];
        out.errors.push({ tool: name, code: e.code, hint: Boolean(e.hint), rule: e.rule || '' });
      }
      continue;
    }
    if (wantCode) {
      fail(`${what}: succeeded, want ${wantCode}`);
      continue;
    }
    out.successes++;
    const validate = outputs[name];
    if (!validate) continue;
    if (res.structuredContent === undefined) fail(`${what}: no structuredContent though the tool has an outputSchema`);
    else if (!validate(res.structuredContent)) fail(`${what}: structuredContent fails the outputSchema: ${ajv.errorsText(validate.errors)}`);
    else out.validated++;
  }
  if (tools.some((t) => t.name === 'run_script')) out.runScript = await runScript(client, outputs.run_script, fail);
  await client.close();
  out.elicitation = await elicit(fail);
  console.log(JSON.stringify(out));
  process.exit(out.failures.length ? 1 : 0);
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
