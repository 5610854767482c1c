// Calls many tools of a running restmcp with the official TypeScript MCP SDK
// client (v1), which validates every structuredContent against the tool's
// outputSchema from tools/list and throws when it does not fit. Prints one
// JSON object on stdout for the Go test to assert.
//
//   node call-all.mjs <mcp-url> <api-key> <calls.json>
//
// calls.json is [{"name": "<tool>", "arguments": {...}}, ...].
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, key, callsFile] = process.argv.slice(2);
if (!url || !key || !callsFile) {
  console.error("usage: node call-all.mjs <mcp-url> <api-key> <calls.json>");
  process.exit(2);
}
const calls = JSON.parse(readFileSync(callsFile, "utf8"));

const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { "x-api-key": key } } });
const client = new Client({ name: "restmcp-ts-call-all", version: "1.0.0" });
await client.connect(transport);
const listed = await client.listTools(); // the SDK keeps each tool's outputSchema validator

const failures = []; // the client threw: the result did not pass its own checks
const toolErrors = []; // isError results
let structured = 0;
for (const c of calls) {
  try {
    const r = await client.callTool({ name: c.name, arguments: c.arguments });
    if (r.isError) toolErrors.push({ name: c.name, text: String(r.content?.[0]?.text ?? "").slice(0, 300) });
    if (r.structuredContent !== undefined) structured++;
  } catch (e) {
    failures.push({ name: c.name, error: String(e?.message ?? e).slice(0, 500) });
  }
}
await client.close();

process.stdout.write(JSON.stringify({ listed: listed.tools.length, called: calls.length, structured, failures, toolErrors }) + "\n");
