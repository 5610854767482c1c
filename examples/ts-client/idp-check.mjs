// Signs in to a running restmcp in resource-server mode the way an OAuth
// client of the official TypeScript MCP SDK (v1) does, with its own
// client-credentials provider: the first request is answered 401 with the
// protected resource metadata, which names the vendor's OpenID provider;
// the SDK discovers it, gets an access token for the MCP URL there (RFC
// 8707 resource), and retries. Then lists the tools, calls one, and reads
// GET /usage with the same token. Prints one JSON object on stdout.
//
//   node idp-check.mjs <mcp-url> <client-id> <client-secret> <tool> '<arguments>'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ClientCredentialsProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";

const [url, clientId, clientSecret, tool, argsJSON] = process.argv.slice(2);
const authProvider = new ClientCredentialsProvider({ clientId, clientSecret, scope: "mcp" });
const seen = [];
const fetchLogged = async (input, init) => {
  const resp = await fetch(input, init);
  seen.push(`${init?.method ?? "GET"} ${new URL(String(input)).pathname} ${resp.status}`);
  return resp;
};
const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider, fetch: fetchLogged });
const client = new Client({ name: "restmcp-idp-check", version: "1.0.0" });
await client.connect(transport);
const listed = await client.listTools();
const result = await client.callTool({ name: tool, arguments: JSON.parse(argsJSON || "{}") });
const token = authProvider.tokens()?.access_token;
const usage = await (await fetch(new URL("/usage", url), { headers: { Authorization: `Bearer ${token}` } })).json();
await client.close();
process.stdout.write(JSON.stringify({ tools: listed.tools.map((t) => t.name), result, token, usage, seen }) + "\n");
