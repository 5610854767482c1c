// Drives a running restmcp over the legacy HTTP+SSE transport (MCP
// 2024-11-05) with the official TypeScript MCP SDK's SSEClientTransport:
// open the stream with the given headers, list the tools, make each call in
// order. Prints one JSON object on stdout for the Go test to assert.
//
//   node sse-check.mjs <sse-url> '<headers as JSON>' '<calls as JSON: [{"name":…,"arguments":{…}}]>'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";

const [url, headersJSON, callsJSON] = process.argv.slice(2);
if (!url || !headersJSON || !callsJSON) {
  console.error("usage: node sse-check.mjs <sse-url> '<headers>' '<calls>'");
  process.exit(2);
}

// requestInit's headers go on the stream's GET and on every POST.
const transport = new SSEClientTransport(new URL(url), { requestInit: { headers: JSON.parse(headersJSON) } });
const client = new Client({ name: "restmcp-sse-check", version: "1.0.0" });
await client.connect(transport);
const listed = await client.listTools();
const results = [];
for (const call of JSON.parse(callsJSON)) {
  try {
    results.push(await client.callTool(call));
  } catch (err) {
    results.push({ error: { code: err.code, message: err.message } });
  }
}
await client.close();

process.stdout.write(JSON.stringify({
  serverName: client.getServerVersion()?.name,
  tools: listed.tools.map((t) => t.name),
  results,
}) + "\n");
