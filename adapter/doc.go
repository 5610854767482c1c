// Package adapter serves a set of [openapi.Tool] values as a remote MCP
// server over Streamable HTTP.
//
// One [Server] owns an official go-sdk [mcp.Server] (stateless mode, tools
// capability only), a gin engine that puts restmcp's own middleware in front
// of it (panic recovery, request id, access log with secrets redacted, Origin
// check, body limit, credential extraction, JSON-RPC peek and, for tools/call
// only, key requirement and metering), and one shared upstream
// [net/http.Client]. Every tools/call becomes the REST request its tool
// describes, sent with the caller's own API key, and the upstream response is
// mapped to a CallToolResult following CONVENTIONS.md R1–R7.
//
// The package imports openapi and the go-sdk; it must not import metering,
// config or cmd. It declares the small [Meter] interface it needs, which cmd
// satisfies with a shim over the metering package.
//
// Security notes:
//   - Inbound HTTP headers are never forwarded upstream. The only caller
//     data that reaches the upstream are the tool arguments and the caller's
//     key, placed where the operation's security scheme says.
//   - The key is never logged; logs carry key_id, the first 12 hex digits of
//     its SHA-256.
//   - The go-sdk's localhost (DNS rebinding) protection is turned off because
//     it refuses every request that reaches a loopback listener with a
//     non-loopback Host, which is what a reverse proxy or sidecar on the same
//     machine does. DNS rebinding is stopped instead by the Origin rule: a
//     browser always sends Origin on a POST, and any Origin that is present
//     and not listed in [Options.AllowedOrigins] is refused with 403.
package adapter
