// Calls a tool with no API key through the official TypeScript MCP SDK
// client (v1) configured with an OAuth provider, as Claude Code and other
// OAuth-capable clients are: the 401 makes the SDK try to sign in, and the
// error it ends with is printed as {"name":…,"message":…}. The provider
// never opens a browser: if the SDK gets as far as an authorization URL, it
// is printed as {"redirect":…} instead.
//
//   node keyless-check.mjs <mcp-url> <tool> <arguments-json>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, tool, args] = process.argv.slice(2);
const redirect = "http://127.0.0.1:9/callback";
let client;
const provider = {
  get redirectUrl() { return redirect; },
  get clientMetadata() {
    return { client_name: "keyless-check", redirect_uris: [redirect], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  },
  clientInformation() { return undefined; },
  saveClientInformation() {},
  tokens() { return undefined; },
  saveTokens() {},
  redirectToAuthorization(u) { console.log(JSON.stringify({ redirect: u.toString() })); process.exit(0); },
  saveCodeVerifier() {},
  codeVerifier() { return "unused"; },
};
client = new Client({ name: "keyless-check", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
try {
  const result = await client.callTool({ name: tool, arguments: JSON.parse(args) });
  console.log(JSON.stringify({ result }));
} catch (e) {
  console.log(JSON.stringify({ name: e.constructor.name, message: e.message }));
}
await client.close();
