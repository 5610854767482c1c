// Drives a running restmcp with the official TypeScript MCP client v2
// (@modelcontextprotocol/client), pinned to the 2026-07-28 protocol
// revision: discover, list the tools, call one, with the SDK's own
// output-schema validation. Prints one JSON object on stdout for the Go
// test to assert.
//
//   node check-v2.mjs <mcp-url> <api-key> <tool> '<arguments as JSON>'
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, key, tool, argsJSON] = process.argv.slice(2);
if (!url || !key || !tool) {
  console.error("usage: node check-v2.mjs <mcp-url> <api-key> <tool> '<arguments>'");
  process.exit(2);
}

const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { "x-api-key": key } } });
const client = new Client({ name: "restmcp-ts-check-v2", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
await client.connect(transport);
const listed = await client.listTools();
const result = await client.callTool({ name: tool, arguments: JSON.parse(argsJSON || "{}") });
await client.close();

process.stdout.write(JSON.stringify({
  serverName: client.getServerVersion()?.name,
  tools: listed.tools.map((t) => t.name),
  result,
}) + "\n");
