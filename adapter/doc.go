// Package adapter serves a set of [openapi.Tool] values as a remote MCP
// server over Streamable HTTP (and, optionally, the legacy HTTP+SSE
// transport and an OAuth-protected endpoint).
//
// One [Server] owns an official go-sdk [mcp.Server] (stateless), a gin
// engine that puts restmcp's own layers in front of it, and one shared
// upstream [net/http.Client]. Every tools/call becomes the REST request its
// tool describes, sent with the caller's own API key, and the upstream
// response is mapped to a CallToolResult as docs/results.md describes.
//
// A request meets, in order (each in the file named):
//
//   - the HTTP edge (http.go): panic recovery, request id, the access log
//     (keys and legacy session ids redacted), the Origin check, the body
//     limit, then the caller, decided once (caller.go: resolveCaller makes
//     of the request's credential, read by apikey.go from x-api-key, Bearer
//     or ?api_key=, the one caller: an API key, the key an OAuth access
//     token stands for, a vendor identity provider's identity, or no one in
//     public mode; or a refusal, answered by the gate's renderer);
//   - the transport (transport.go, message.go): the one JSON-RPC message
//     decoded once, with the go-sdk's semantics, an ambiguous one refused;
//     Accept settled; the checks the go-sdk would make after admission made
//     before it (Content-Type, ids, MCP-Protocol-Version, the 2026-07-28
//     headers and _meta);
//   - sessions mode (sessions.go, caps.go, session/): a session issued by
//     initialize, owned by its caller, capped per address and in total
//     (its refusals, too, answered by the gate's renderer);
//   - the gate (gate.go): admitCall, the one admission of every call
//     whatever its door (tools/call, call_operation in compact mode,
//     resources/read, a legacy SSE message, the OAuth endpoint):
//     authenticate, the concurrency caps (slots.go), the plan gate and the
//     [Meter]. It returns an admission or a *refusal and writes nothing;
//     renderRefusal answers HTTP, refusal.rpcError a stream;
//   - the tool table (fastpath.go, tool.go, compact.go, resources.go):
//     tools/list and tools/call answered from restmcp's own table, the
//     upstream call built by openapi and sent (upstream.go), its response
//     mapped (result.go, encoding.go), then refunds and usage events written
//     off the response path (aftercall.go, events.go, usage.go); what an
//     admission holds and the interfaces the gate uses are in admission.go.
//
// The package imports openapi, metering (for its value types: [Call],
// [Decision], [Event], [Plan]), the go-sdk and the Prometheus client. It
// declares the small interfaces it needs: [KeyResolver] (key → plan) and
// [Meter] (AdmitCall, Refund, RecordEvent, Report), with [RefundBatcher]
// and [EventBatcher] for batched writes; metering's meters satisfy them.
//
// HTTP contract, in short (the whole of it is in docs/errors.md):
// initialize, tools/list, ping, notifications and responses need no key and
// are never metered; tools/call needs a key unless [Options.AllowAnonymous]
// (401 with WWW-Authenticate without one); an unknown or revoked key is
// 401, a key store or Meter that cannot answer 503 with Retry-After; a tool
// outside the plan is an isError result naming tool, plan and upgrade,
// unmetered; a refused call is 429 with the exact Retry-After; every
// tools/call response, admitted or refused, carries the RateLimit and
// X-RateLimit headers of the most restrictive limit, and no other method
// does.
//
// Security notes (docs/security.md has them all, each with its test): no
// inbound header reaches the upstream except those [Options.ForwardHeaders]
// lists; the key is never logged (logs carry key_id, 12 hex digits of its
// SHA-256); DNS rebinding is stopped by the Origin rule rather than the
// go-sdk's localhost check, which would refuse every request a reverse
// proxy on the same machine forwards.
package adapter
