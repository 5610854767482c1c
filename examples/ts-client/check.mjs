// Drives a running restmcp with the official TypeScript MCP SDK client, as a
// third-party client would: connect over Streamable HTTP, list the tools,
// call one. Prints one JSON object on stdout for the Go test to assert.
//
//   node check.mjs <mcp-url> <api-key> <tool> '<arguments as JSON>' [header|query|bearer]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, key, tool, argsJSON, how = "header"] = process.argv.slice(2);
if (!url || !key || !tool) {
  console.error("usage: node check.mjs <mcp-url> <api-key> <tool> '<arguments>' [header|query|bearer]");
  process.exit(2);
}

const endpoint = new URL(url);
const headers = {};
if (how === "header") headers["x-api-key"] = key;
else if (how === "bearer") headers["Authorization"] = `Bearer ${key}`;
else endpoint.searchParams.set("api_key", key);

const transport = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } });
const client = new Client({ name: "restmcp-ts-check", version: "1.0.0" });
await client.connect(transport);
const listed = await client.listTools();
const result = await client.callTool({ name: tool, arguments: JSON.parse(argsJSON || "{}") });
await client.close();

process.stdout.write(JSON.stringify({
  serverName: client.getServerVersion()?.name,
  tools: listed.tools.map((t) => t.name),
  result,
}) + "\n");
