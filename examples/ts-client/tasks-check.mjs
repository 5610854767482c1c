// Drives a running restmcp with the official TypeScript MCP client v2
// (@modelcontextprotocol/client) on the 2026-07-28 revision and the
// official Tasks extension client (@modelcontextprotocol/ext-tasks,
// io.modelcontextprotocol/tasks, SEP-2663): calls a tool whose operation
// answers 202 Accepted, and lets the extension's session take the task
// and poll tasks/get until it ends. The client v2 itself refuses a result
// of type "task" (it has no Tasks runtime), so, as the extension's
// documentation asks for a 2026-07-28 server, its requests for tools/call
// and tasks/* go through rawDispatch: a plain Streamable HTTP POST here.
// Prints one JSON object on stdout for the Go test to assert: the
// execution kind, every raw exchange (method, and the result or error),
// and the final CallToolResult.
//
//   node tasks-check.mjs <mcp-url> <api-key> <tool> '<arguments as JSON>'
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";

const [url, key, tool, argsJSON] = process.argv.slice(2);
if (!url || !key || !tool) {
  console.error("usage: node tasks-check.mjs <mcp-url> <api-key> <tool> '<arguments>'");
  process.exit(2);
}
const version = "2026-07-28";
const clientInfo = { name: "restmcp-tasks-check", version: "1.0.0" };
const clientCapabilities = { extensions: { "io.modelcontextprotocol/tasks": {} } };

const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { "x-api-key": key } } });
const client = new Client(clientInfo, { capabilities: clientCapabilities, versionNegotiation: { mode: { pin: version } } });
await client.connect(transport);

const exchanges = [];
let nextId = 1;
// rawDispatch: one JSON-RPC request over Streamable HTTP, with the
// 2026-07-28 standard headers (Mcp-Name: the tool, or the task id).
async function rawDispatch(request, options = {}) {
  const params = request.params ?? {};
  const name = request.method === "tools/call" ? params.name : params.taskId;
  const resp = await fetch(url, {
    method: "POST",
    signal: options.signal,
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "x-api-key": key,
      "MCP-Protocol-Version": version,
      "Mcp-Method": request.method,
      ...(name === undefined ? {} : { "Mcp-Name": name }),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method: request.method, params }),
  });
  let text = await resp.text();
  if ((resp.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    text = text.split("\n").find((l) => l.startsWith("data: "))?.slice(6) ?? "";
  }
  const msg = JSON.parse(text);
  exchanges.push({ method: request.method, http: resp.status, ...(msg.error ? { error: msg.error } : { result: msg.result }) });
  return msg.error ? { kind: "error", error: msg.error } : { kind: "result", result: msg.result };
}

const session = createTaskSessionFromClient(client, {
  endpointId: "restmcp-tasks-check",
  rawDispatch,
  v2RequestFraming: { protocolVersion: version, clientInfo, clientCapabilities },
});
let out;
try {
  const execution = await session.callTool(tool, JSON.parse(argsJSON || "{}"));
  const { outcome } = await execution.settle();
  out = { kind: execution.kind, exchanges, result: resultFromTaskOutcome(outcome) };
} finally {
  await session.close();
  await client.close();
}
process.stdout.write(JSON.stringify(out) + "\n");
