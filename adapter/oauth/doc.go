// Package oauth is restmcp's OAuth 2.1 authorization server, the "OAuth
// front" for MCP clients that cannot send an API key (Claude's and
// ChatGPT's custom connectors, and any client that signs in): the user
// signs in on restmcp's own page with the API key, and the client's access
// token stands for that key on every call, metered as the key.
//
// [Server] serves the Protected Resource Metadata (RFC 9728) of the OAuth
// MCP endpoint and, when [Options.KeyPath] is set, of the API-key endpoint
// too; the Authorization Server Metadata (RFC 8414); Dynamic Client
// Registration (RFC 7591) with its client configuration read (RFC 7592);
// Client ID Metadata Documents; the sign-in page (authorization code with
// PKCE S256, RFC 7636, and the resource indicator, RFC 8707); the token
// endpoint (authorization_code and rotating refresh tokens); and
// revocation (RFC 7009). [Server.ResolveToken] turns an access token back
// into the API key, for the deployment it was issued for only.
//
// What real connectors send and how each rule answers them (O1–O22, K1)
// is in docs/oauth.md; the files here are server.go (options, metadata,
// tokens), register.go (registration, metadata documents, per-address
// limits), redirect.go (which redirect URIs a client may register and
// use), authorize.go (the sign-in page), token.go (secrets and sealing)
// and store.go, redisstore.go (clients and grants in memory or Redis).
package oauth
