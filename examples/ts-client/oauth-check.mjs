// Drives restmcp's OAuth front with the official TypeScript MCP SDK client
// and its OAuth client support, as a connector does: connect to the OAuth
// MCP endpoint, get a 401, discover the protected resource and the
// authorization server, register (Dynamic Client Registration, or a Client
// ID Metadata Document URL when one is given), open the authorization URL,
// sign in on restmcp's page with the API key, exchange the code (PKCE), then
// list the tools and call one. It then replaces the access token with a
// dead one so that the SDK refreshes it, and calls the tool again.
// Prints one JSON object on stdout for the Go test to assert.
//
//   node oauth-check.mjs <oauth-mcp-url> <api-key> <tool> '<arguments as JSON>' [client-metadata-url]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const [url, apiKey, tool, argsJSON, metadataURL] = process.argv.slice(2);
if (!url || !apiKey || !tool) {
  console.error("usage: node oauth-check.mjs <oauth-mcp-url> <api-key> <tool> '<arguments>' [client-metadata-url]");
  process.exit(2);
}
const redirectUrl = "http://127.0.0.1:33418/callback";
const stateValue = "state-restmcp-check";

// An in-memory OAuthClientProvider: what a connector keeps per user.
const store = { client: undefined, tokens: undefined, verifier: undefined, authorizationURL: undefined };
const provider = {
  get redirectUrl() { return redirectUrl; },
  clientMetadataUrl: metadataURL,
  get clientMetadata() {
    return {
      client_name: "restmcp OAuth check",
      redirect_uris: [redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  },
  state() { return stateValue; },
  clientInformation() { return store.client; },
  saveClientInformation(info) { store.client = info; },
  tokens() { return store.tokens; },
  saveTokens(tokens) { store.tokens = tokens; },
  redirectToAuthorization(u) { store.authorizationURL = new URL(u); },
  saveCodeVerifier(v) { store.verifier = v; },
  codeVerifier() { return store.verifier; },
};

// The browser's part: open the sign-in page, post the form with the key,
// follow nothing: the 303 Location is the redirect back to the client.
function decodeEntities(s) {
  return s.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)))
    .replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}
async function signIn(authorizationURL) {
  const page = await fetch(authorizationURL, { redirect: "manual" });
  const html = await page.text();
  if (page.status !== 200) throw new Error(`sign-in page: HTTP ${page.status}: ${html}`);
  const cookie = (page.headers.get("set-cookie") || "").split(";")[0];
  const form = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    form.set(m[1], decodeEntities(m[2]));
  }
  form.set("api_key", apiKey);
  form.set("action", "allow");
  const action = new URL(decodeEntities(html.match(/<form method="post" action="([^"]+)">/)[1]), authorizationURL);
  const res = await fetch(action, {
    method: "POST", redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookie },
    body: form.toString(),
  });
  if (res.status !== 303) throw new Error(`sign-in: HTTP ${res.status}: ${await res.text()}`);
  const back = new URL(res.headers.get("location"));
  return { back, pageBytes: Buffer.byteLength(html), title: html.match(/<title>([^<]*)<\/title>/)[1] };
}

async function connect() {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  const client = new Client({ name: "restmcp-oauth-check", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
let unauthorized = false;
try {
  await new Client({ name: "restmcp-oauth-check", version: "1.0.0" }).connect(first);
} catch (e) {
  if (!(e instanceof UnauthorizedError)) throw e;
  unauthorized = true;
}
const authURL = store.authorizationURL;
const { back, pageBytes, title } = await signIn(authURL);
if (back.searchParams.get("state") !== stateValue) throw new Error("state not returned: " + back);
await first.finishAuth(back.searchParams.get("code"));
const firstTokens = store.tokens;

let client = await connect();
const listed = await client.listTools();
const result = await client.callTool({ name: tool, arguments: JSON.parse(argsJSON || "{}") });
await client.close();

// A dead access token: the SDK gets 401 invalid_token, refreshes, retries.
store.tokens = { ...store.tokens, access_token: "rmcp_at_AAAAAAAAAAAAAAAAAAAAAA." + "A".repeat(43) };
client = await connect();
const again = await client.callTool({ name: tool, arguments: JSON.parse(argsJSON || "{}") });
await client.close();

const q = authURL.searchParams;
process.stdout.write(JSON.stringify({
  unauthorized,
  registeredClientID: store.client?.client_id,
  authorize: {
    endpoint: authURL.origin + authURL.pathname,
    response_type: q.get("response_type"),
    code_challenge_method: q.get("code_challenge_method"),
    resource: q.get("resource"),
    scope: q.get("scope"),
    redirect_uri: q.get("redirect_uri"),
  },
  callback: { origin: back.origin + back.pathname, iss: back.searchParams.get("iss") },
  pageTitle: title,
  pageBytes,
  tokenType: firstTokens.token_type,
  scope: firstTokens.scope,
  accessPrefix: firstTokens.access_token.slice(0, 8),
  refreshPrefix: firstTokens.refresh_token.slice(0, 8),
  refreshed: store.tokens.access_token !== firstTokens.access_token && store.tokens.refresh_token !== firstTokens.refresh_token,
  tools: listed.tools.map((t) => t.name),
  result,
  again,
}) + "\n");
