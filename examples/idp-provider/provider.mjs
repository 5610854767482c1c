// A real OpenID provider (the oidc-provider package) for restmcp's
// resource-server tests, on 127.0.0.1:<port>:
//   - client "connector" (secret "connector-secret") gets JWT access tokens
//     by client_credentials for the resource it names (RFC 8707; the MCP
//     URL), with a "plan" claim;
//   - client "connector-app" (public, PKCE) signs a user in on the
//     package's own login and consent pages (devInteractions: any login
//     name) and gets a JWT access token for the resource it names;
//   - client "restmcp" (secret "restmcp-secret") exchanges such a token
//     (RFC 8693, grant urn:ietf:params:oauth:grant-type:token-exchange) for
//     a JWT access token of the audience it asks for. oidc-provider has no
//     token exchange of its own; this grant is registered here with its
//     public registerGrantType, and mints the token with its own
//     ClientCredentials model;
//   - client "ema-app" (secret "ema-secret"), an MCP client the enterprise
//     signs its users in to (authorization code), exchanges a user's ID
//     token for an Identity Assertion JWT Authorization Grant (ID-JAG,
//     requested_token_type urn:ietf:params:oauth:token-type:id-jag) for an
//     MCP server's authorization server (audience) and resource, as
//     Enterprise-Managed Authorization §4 says: typ oauth-id-jag+jwt, sub,
//     client_id (the client's id at that authorization server, from the
//     JSON file <client-ids> maps audiences to: the mapping an enterprise
//     configures), resource, jti, iat, exp in 5 minutes.
// Prints "listening <issuer>" once ready. CONNECTOR_REDIRECT_URI, when set,
// is connector-app's redirect URI (default http://127.0.0.1:33418/callback).
//
//   node provider.mjs <port> <plan> [<client-ids>]
import Provider from "oidc-provider";
import { generateKeyPair, exportJWK, jwtVerify, createLocalJWKSet, SignJWT } from "jose";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";

const [port, plan = "pro", clientIdsFile] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
const connectorRedirect = process.env.CONNECTOR_REDIRECT_URI || "http://127.0.0.1:33418/callback";
const { privateKey } = await generateKeyPair("RS256", { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), kid: "provider-1", alg: "RS256", use: "sig" };
const { d, p, q, dp, dq, qi, ...publicJWK } = jwk;
const localKeys = createLocalJWKSet({ keys: [publicJWK] });
const exchange = "urn:ietf:params:oauth:grant-type:token-exchange";
const idJag = "urn:ietf:params:oauth:token-type:id-jag";

const provider = new Provider(issuer, {
  jwks: { keys: [jwk] },
  clients: [
    { client_id: "connector", client_secret: "connector-secret", grant_types: ["client_credentials"], redirect_uris: [], response_types: [], scope: "mcp" },
    { client_id: "restmcp", client_secret: "restmcp-secret", grant_types: [exchange], redirect_uris: [], response_types: [] },
    // A connector that signs its user in (authorization code with PKCE).
    { client_id: "connector-app", token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"],
      redirect_uris: [connectorRedirect], response_types: ["code"], scope: "openid mcp offline_access" },
    // An MCP client of the enterprise (Enterprise-Managed Authorization).
    { client_id: "ema-app", client_secret: "ema-secret", grant_types: ["authorization_code", exchange],
      redirect_uris: ["http://127.0.0.1:33419/callback"], response_types: ["code"], scope: "openid" },
  ],
  scopes: ["openid", "mcp", "api", "offline_access"],
  features: {
    // The package's own login and consent pages: any login name signs in.
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx) => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => ({ scope: "mcp", audience: resource, accessTokenFormat: "jwt", accessTokenTTL: 3600, jwt: { sign: { alg: "RS256" } } }),
    },
  },
  extraTokenClaims: (ctx, token) => (token.clientId === "restmcp" ? undefined : { plan }),
});

// idJagFor answers a token exchange for an ID-JAG (EMA §4.1, §4.2): the
// subject token is an ID token this provider issued to the requesting
// client; the assertion names its user for the audience's client.
async function idJagFor(ctx) {
  const { subject_token: subject, subject_token_type: subjectType, audience, resource, scope } = ctx.oidc.params;
  if (subjectType !== "urn:ietf:params:oauth:token-type:id_token" || !subject || !audience || !resource) {
    ctx.status = 400;
    ctx.body = { error: "invalid_request", error_description: "an ID-JAG needs subject_token (an ID token, type id_token), audience and resource" };
    return;
  }
  let claims;
  try {
    ({ payload: claims } = await jwtVerify(subject, localKeys, { issuer, audience: ctx.oidc.client.clientId }));
  } catch (err) {
    ctx.status = 400;
    ctx.body = { error: "invalid_grant", error_description: "the ID token does not verify for this client: " + err.message };
    return;
  }
  const clientIds = clientIdsFile ? JSON.parse(readFileSync(clientIdsFile, "utf8")) : {};
  if (!clientIds[audience]) {
    ctx.status = 400;
    ctx.body = { error: "invalid_target", error_description: `no client is configured for ${audience}` };
    return;
  }
  const jag = await new SignJWT({ resource, client_id: clientIds[audience], ...(scope ? { scope } : {}) })
    .setProtectedHeader({ alg: "RS256", kid: jwk.kid, typ: "oauth-id-jag+jwt" })
    .setIssuer(issuer).setSubject(claims.sub).setAudience(audience).setIssuedAt().setExpirationTime("5m").setJti(randomUUID())
    .sign(privateKey);
  ctx.body = { issued_token_type: idJag, access_token: jag, token_type: "N_A", expires_in: 300 };
}

provider.registerGrantType(exchange, async (ctx) => {
  if (ctx.oidc.params.requested_token_type === idJag) return idJagFor(ctx);
  const { subject_token: subject, subject_token_type: subjectType, audience } = ctx.oidc.params;
  if (subjectType !== "urn:ietf:params:oauth:token-type:access_token" || !subject || !audience) {
    ctx.status = 400;
    ctx.body = { error: "invalid_request", error_description: "subject_token, its type (access_token) and audience are required" };
    return;
  }
  let claims;
  try {
    ({ payload: claims } = await jwtVerify(subject, localKeys, { issuer }));
  } catch (err) {
    ctx.status = 400;
    ctx.body = { error: "invalid_grant", error_description: "the subject token does not verify: " + err.message };
    return;
  }
  const { ClientCredentials, ResourceServer } = ctx.oidc.provider;
  const token = new ClientCredentials({ client: ctx.oidc.client, scope: "api" });
  token.resourceServer = new ResourceServer(audience, { audience, scope: "api", accessTokenFormat: "jwt", accessTokenTTL: 600, jwt: { sign: { alg: "RS256" } } });
  token.extra = { act: { sub: "restmcp" }, on_behalf_of: claims.client_id ?? claims.sub };
  ctx.oidc.entity("ClientCredentials", token);
  const value = await token.save();
  ctx.body = { access_token: value, issued_token_type: "urn:ietf:params:oauth:token-type:access_token", token_type: "Bearer", expires_in: token.expiration };
}, ["subject_token", "subject_token_type", "audience", "requested_token_type", "resource", "scope"]);

provider.listen(Number(port), "127.0.0.1", () => console.log(`listening ${issuer}`));
