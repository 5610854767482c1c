// Enterprise-Managed Authorization against a running restmcp, as an MCP
// client built on the official TypeScript MCP client v2 does it: its user
// signs in at the enterprise's OpenID provider (authorization code, the
// provider's own login and consent pages followed as a browser would) and
// the client holds the ID token; the SDK's CrossAppAccessProvider is
// answered 401 by restmcp's OAuth MCP endpoint, discovers restmcp's
// authorization server, gets an ID-JAG for it from the enterprise provider
// (RFC 8693 token exchange, discoverAndRequestJwtAuthGrant) and presents it
// as a JWT bearer grant (RFC 7523); then it lists the tools and calls one.
// The client registered at restmcp's authorization server beforehand; its
// id is written to <client-ids> for the provider (the mapping an
// enterprise configures). Prints one JSON object on stdout for the Go test.
//
//   node ema-check.mjs <oauth-mcp-url> <provider-issuer> <login> <client-ids> <tool> '<arguments as JSON>'
import { writeFileSync } from "node:fs";
import { createHash, randomBytes } from "node:crypto";
import { browser } from "./browser.mjs";
import { Client, StreamableHTTPClientTransport, CrossAppAccessProvider, discoverAndRequestJwtAuthGrant } from "@modelcontextprotocol/client";

const [url, idp, login, clientIdsFile, tool, argsJSON] = process.argv.slice(2);
const mcp = new URL(url);
const redirect = "http://127.0.0.1:33419/callback";

const { browse } = browser(login, redirect);

// 1. Single sign-on at the enterprise's provider: an ID token for the user.
const verifier = randomBytes(32).toString("base64url");
const challenge = createHash("sha256").update(verifier).digest("base64url");
const auth = new URL("/auth", idp);
for (const [k, v] of Object.entries({ client_id: "ema-app", response_type: "code", scope: "openid", redirect_uri: redirect, state: "s1",
  code_challenge: challenge, code_challenge_method: "S256" })) auth.searchParams.set(k, v);
const back = await browse(auth.href);
const tokenRes = await fetch(new URL("/token", idp), {
  method: "POST",
  headers: { "Content-Type": "application/x-www-form-urlencoded", Authorization: "Basic " + Buffer.from("ema-app:ema-secret").toString("base64") },
  body: new URLSearchParams({ grant_type: "authorization_code", code: back.searchParams.get("code"), redirect_uri: redirect, code_verifier: verifier }),
});
const { id_token: idToken } = await tokenRes.json();
if (!idToken) throw new Error(`no ID token: HTTP ${tokenRes.status}`);

// 2. The client's registration at restmcp's authorization server, and the
// enterprise's mapping to it.
const reg = await fetch(new URL("/oauth/register", mcp), {
  method: "POST", headers: { "Content-Type": "application/json" },
  body: JSON.stringify({ client_name: "restmcp EMA check", redirect_uris: ["http://127.0.0.1:1/callback"], token_endpoint_auth_method: "none",
    grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] }),
});
const { client_id: clientId } = await reg.json();
writeFileSync(clientIdsFile, JSON.stringify({ [mcp.origin]: clientId }));

// 3. The SDK's Enterprise-Managed Authorization provider.
const exchanges = [];
const provider = new CrossAppAccessProvider({
  assertion: async (ctx) => {
    const r = await discoverAndRequestJwtAuthGrant({ idpUrl: idp, audience: ctx.authorizationServerUrl, resource: ctx.resourceUrl,
      idToken, clientId: "ema-app", clientSecret: "ema-secret", scope: ctx.scope, fetchFn: ctx.fetchFn });
    exchanges.push({ audience: ctx.authorizationServerUrl, resource: ctx.resourceUrl });
    return r.jwtAuthGrant;
  },
  clientId, clientSecret: "unused", expectedIssuer: mcp.origin,
});
const client = new Client({ name: "restmcp-ema-check", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(mcp, { authProvider: provider }));
const listed = await client.listTools();
const result = await client.callTool({ name: tool, arguments: JSON.parse(argsJSON || "{}") });
const token = provider.tokens()?.access_token;
const usage = await (await fetch(new URL("/usage", mcp), { headers: { Authorization: `Bearer ${token}` } })).json();
await client.close();
process.stdout.write(JSON.stringify({ clientId, exchanges, tools: listed.tools.map((t) => t.name), result, refresh: provider.tokens()?.refresh_token ?? null, usage }) + "\n");
