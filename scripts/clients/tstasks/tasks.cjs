'use strict';
// Drives toolwarden's MCP tasks with the official TypeScript SDK's task
// client (client.experimental.tasks, @modelcontextprotocol/sdk installed
// by scripts/clients/setup-ts-sdk) over streamable HTTP, one step per run
// so that the Go test (e2e/tasks_test.go) can disconnect the client, let
// the human decide on the approval page, and come back on a new session:
//   node tasks.cjs SDK_PREFIX URL TOKEN start TOOL ARGS_JSON
//     starts TOOL as a task (callToolStream with a task request), prints
//     {"taskId", "status"} of the created task and disconnects at once;
//   node tasks.cjs SDK_PREFIX URL TOKEN get TASK_ID
//     prints {"status"} or {"error"} (another identity's task);
//   node tasks.cjs SDK_PREFIX URL TOKEN list
//     prints {"tasks": [ids]};
//   node tasks.cjs SDK_PREFIX URL TOKEN wait TASK_ID
//     polls tasks/get until the task ends, then prints {"status",
//     "isError", "text"} of tasks/result.
// Prints one JSON line on stdout; exits 1 on an unexpected failure.
const path = require('node:path');
const { createRequire } = require('node:module');

const [prefixArg, url, token, step, a1, a2] = process.argv.slice(2);
const sdk = createRequire(path.join(path.resolve(prefixArg), 'node_modules', '.resolve.js'));
const { Client } = sdk('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = sdk('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { CallToolResultSchema } = sdk('@modelcontextprotocol/sdk/types.js');

async function connect() {
  const client = new Client({ name: 'toolwarden-tasks-check', version: '1' }, { capabilities: { tasks: {} } });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: 'Bearer ' + token } },
  });
  await client.connect(transport);
  return { client, transport };
}

async function main() {
  const { client, transport } = await connect();
  const tasks = client.experimental.tasks;
  let out;
  switch (step) {
    case 'start': {
      const stream = tasks.callToolStream({ name: a1, arguments: JSON.parse(a2) }, CallToolResultSchema, { task: { ttl: 3600000 } });
      for await (const msg of stream) {
        if (msg.type === 'taskCreated') {
          out = { taskId: msg.task.taskId, status: msg.task.status };
          break; // leave the stream: the client disconnects, the task runs on
        }
        throw new Error('expected taskCreated first, got ' + JSON.stringify(msg));
      }
      break;
    }
    case 'get':
      try {
        const task = await tasks.getTask(a1);
        out = { status: task.status };
      } catch (e) {
        out = { error: String(e.message || e) };
      }
      break;
    case 'list': {
      const res = await tasks.listTasks();
      out = { tasks: res.tasks.map((t) => t.taskId) };
      break;
    }
    case 'wait': {
      let task = await tasks.getTask(a1);
      for (let i = 0; !['completed', 'failed', 'cancelled'].includes(task.status); i++) {
        if (i > 600) throw new Error('the task did not end: ' + task.status);
        await new Promise((r) => setTimeout(r, 200));
        task = await tasks.getTask(a1);
      }
      const res = await tasks.getTaskResult(a1, CallToolResultSchema);
      out = { status: task.status, isError: !!res.isError, text: (res.content[0] || {}).text || '' };
      break;
    }
    default:
      throw new Error('unknown step ' + step);
  }
  await transport.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().then(() => process.exit(0), (e) => {
  process.stdout.write(JSON.stringify({ failure: String(e && e.stack || e) }) + '\n');
  process.exit(1);
});
