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
// mapped to a CallToolResult as docs/results.md describes.
//
// The package imports openapi, the go-sdk and the Prometheus client; it must
// not import metering, config or cmd. It declares the small interfaces it
// needs from plans and metering — [KeyResolver] (key → [Plan]: allowed
// tools, cost, denial text), [Meter] (AdmitCall, Refund, RecordEvent,
// Report) — with plain value types ([Call], [Decision], [Event]); cmd
// satisfies them with shims over the metering package.
//
// HTTP behaviour:
//   - POST /mcp carries exactly one JSON-RPC message; a batch gets 400.
//     initialize, server/discover, tools/list (every tool in one page,
//     sorted by name), ping, notifications and responses need
//     no key and are never metered; notifications and responses get 202 with
//     no body. GET and DELETE get 405 with "Allow: POST" (stateless mode).
//   - tools/call needs a key unless [Options.AllowAnonymous]: without one,
//     401 with WWW-Authenticate and a JSON-RPC error saying how to send it.
//     With [Options.Keys], an unknown or revoked key gets 401 (error
//     "invalid_token") with a JSON-RPC error naming its key_id and how to
//     get a key; a key store that cannot answer, 503 with Retry-After. A
//     tool outside the caller's plan is answered by the tool handler with
//     an isError result naming tool, plan and upgrade path (the gate's
//     verdict travels in the request's exchange, so the go-sdk writes the
//     envelope with the request's id); it is neither metered nor sent
//     upstream. With a [Meter], every admitted or refused tools/call
//     response carries RateLimit-Limit, RateLimit-Remaining and
//     RateLimit-Reset (seconds) of the most restrictive limit, the same
//     values as X-RateLimit-*, and RateLimit-Policy ("30;w=60;
//     policy=\"per_minute\""); no other method does. Refused: 429 with the
//     exact Retry-After in whole seconds, rounded up, and a message naming
//     the limit and plan. Meter error: 503 with Retry-After and no
//     rate-limit headers. A tools/call naming an unknown tool is never
//     metered: it is answered with -32602 once the caller is authenticated
//     (a call without a key where one is required gets the 401 first).
//   - After the upstream answers, the tool handler refunds the call
//     ([Options.Counting] success: upstream 5xx, failure, or never sent)
//     and records a usage [metering.Event], off the response path and
//     detached from the request, so a client that hung up is still metered:
//     one writer takes everything queued and makes its refunds in one
//     call ([RefundBatcher]) and then its events in one call
//     ([EventBatcher]), each under MeterTimeout.
//   - tools/list and tools/call are answered by go-sdk receiving
//     middleware from the adapter's own tool table rather than tools
//     registered with the SDK's AddTool, which encodes and decodes every
//     schema to check it (most of the start-up time on large documents);
//     the answers are the ones the SDK gives.
//   - [Options.ListByPlan]: go-sdk receiving middleware filters tools/list
//     to the plan's tools when the request carries a key.
//   - GET /usage (the caller's key, in any of the three places) answers the
//     Meter's report as JSON; GET /metrics serves [Options.Metrics].
//   - Accept is read leniently: a client that accepts application/json gets
//     a JSON body (also when it accepts text/event-stream as well: a
//     stateless call has exactly one response and no server-to-client
//     messages, so a stream adds nothing but proxy trouble); one that accepts
//     only text/event-stream gets one SSE "message" event; one that accepts
//     neither gets 406. The go-sdk alone would answer 400 unless both are
//     listed, so two SDK handlers (JSONResponse true and false) serve the
//     same mcp.Server and the middleware picks one.
//   - GET /health is always 200 {"status":"ok"}; GET /ready is 503 while
//     [Options.Ready] returns an error.
//
// The caller's key reaches the tool handler through the request context:
// in stateless mode the go-sdk connects each POST's session with that POST's
// context, so a value set by the gin middleware is visible in the handler.
// The middleware reads the key itself because the SDK never sees the query
// string, and its auth.TokenInfo carrier can only be filled from a Bearer
// token by its own middleware.
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
