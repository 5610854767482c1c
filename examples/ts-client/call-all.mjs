// Calls many tools of a running restmcp with an official TypeScript MCP
// client, which validates every structuredContent against the tool's
// outputSchema from tools/list and throws when it does not fit: the SDK 1.x
// (@modelcontextprotocol/sdk) or the client 2.x (@modelcontextprotocol/client)
// pinned to the 2026-07-28 revision. Prints one JSON object on stdout for the
// Go test to assert.
//
//   node call-all.mjs <v1|v2> <mcp-url> <api-key> <calls.json>
//
// calls.json is [{"name": "<tool>", "arguments": {...}}, ...].
import { readFileSync } from "node:fs";

const [version, url, key, callsFile] = process.argv.slice(2);
if (!["v1", "v2"].includes(version) || !url || !key || !callsFile) {
  console.error("usage: node call-all.mjs <v1|v2> <mcp-url> <api-key> <calls.json>");
  process.exit(2);
}
const calls = JSON.parse(readFileSync(callsFile, "utf8"));

let client, transport;
const requestInit = { headers: { "x-api-key": key } };
if (version === "v1") {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  transport = new StreamableHTTPClientTransport(new URL(url), { requestInit });
  client = new Client({ name: "restmcp-ts-call-all", version: "1.0.0" });
} else {
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  transport = new StreamableHTTPClientTransport(new URL(url), { requestInit });
  client = new Client({ name: "restmcp-ts-call-all-v2", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
}
await client.connect(transport);
const t0 = performance.now();
const listed = await client.listTools(); // the client keeps each tool's outputSchema validator
const listMs = performance.now() - t0;

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

process.stdout.write(JSON.stringify({ listed: listed.tools.length, listMs, called: calls.length, structured, failures, toolErrors }) + "\n");
