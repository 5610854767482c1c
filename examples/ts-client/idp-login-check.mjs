// Signs a user in to a running restmcp in resource-server mode the way a
// connector built on the official TypeScript MCP SDK (v1) does, at the
// vendor's own OpenID provider: the tools/call is answered 401 with
// restmcp's protected resource metadata; the SDK finds the provider there
// and sends the user to its authorization endpoint (authorization code,
// PKCE, RFC 8707 resource); the user signs in on the provider's own login
// and consent pages (followed here as a browser would: its forms posted,
// its cookies kept, its redirects followed); the SDK exchanges the code and
// calls the tool. Prints one JSON object on stdout for the Go test.
//
// With "browser" last, a real browser signs the user in instead: the
// script prints "authorize <url>", and reads "code <code>" (the code the
// browser brought back to the redirect URI) from its standard input.
//
// REDIRECT_URI, when set, is the client's redirect URI (default
// http://127.0.0.1:33418/callback; the provider must have it registered).
//
//   node idp-login-check.mjs <mcp-url> <login> <tool> '<arguments as JSON>' [browser]
import { createInterface } from "node:readline";
import { browser } from "./browser.mjs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const [url, login, tool, argsJSON, mode] = process.argv.slice(2);
const redirectUrl = process.env.REDIRECT_URI || "http://127.0.0.1:33418/callback";
const store = {};
const provider = {
  get redirectUrl() { return redirectUrl; },
  get clientMetadata() {
    return { client_name: "restmcp IdP login check", redirect_uris: [redirectUrl], grant_types: ["authorization_code"], response_types: ["code"], token_endpoint_auth_method: "none", scope: "openid mcp" };
  },
  state() { return "state-idp-check"; },
  // Registered with the provider beforehand, as a vendor registers its connectors.
  clientInformation() { return { client_id: "connector-app" }; },
  saveClientInformation() {},
  tokens() { return store.tokens; },
  saveTokens(t) { store.tokens = t; },
  redirectToAuthorization(u) { store.authorizationURL = new URL(u); },
  saveCodeVerifier(v) { store.verifier = v; },
  codeVerifier() { return store.verifier; },
};

// The browser: the provider's pages followed as a browser would.
const { browse, pages } = browser(login, redirectUrl);

const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
const client = new Client({ name: "restmcp-idp-login-check", version: "1.0.0" });
let unauthorized = false;
try {
  await client.connect(first);
  await client.callTool({ name: tool, arguments: JSON.parse(argsJSON || "{}") });
} catch (e) {
  if (!(e instanceof UnauthorizedError)) throw e;
  unauthorized = true;
}
let code;
if (mode === "browser") {
  process.stdout.write(`authorize ${store.authorizationURL.href}\n`);
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (line.startsWith("code ")) { code = line.slice(5); break; }
  }
  lines.close();
} else {
  const callback = await browse(store.authorizationURL.href);
  code = callback.searchParams.get("code");
}
await first.finishAuth(code);
const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
const signedIn = new Client({ name: "restmcp-idp-login-check", version: "1.0.0" });
await signedIn.connect(transport);
const result = await signedIn.callTool({ name: tool, arguments: JSON.parse(argsJSON || "{}") });
const usage = await (await fetch(new URL("/usage", url), { headers: { Authorization: `Bearer ${store.tokens.access_token}` } })).json();
await signedIn.close();
const q = store.authorizationURL.searchParams;
process.stdout.write(JSON.stringify({
  unauthorized, authorization: `${store.authorizationURL.origin}${store.authorizationURL.pathname}`,
  resource: q.get("resource"), pkce: q.get("code_challenge_method"), pages, result, token: store.tokens.access_token, usage,
}) + "\n");
