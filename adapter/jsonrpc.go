package adapter

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"
)

// JSON-RPC error codes restmcp answers with before the MCP handler runs
// (docs/security.md H18). The three of its own lie outside -32768…-32000,
// which JSON-RPC 2.0 §5.1 reserves (https://www.jsonrpc.org/specification#error_object):
// the MCP SDKs give meaning to codes there (-32001 is "session not found"
// to the TypeScript client, and 2026-07-28 assigns -32020…-32042), so a
// client must not mistake restmcp's refusals for those. The last digits
// are the HTTP status. Options.ErrorCodes restores other codes for clients
// that expect them.
const (
	// CodeUnauthorized: tools/call without a usable API key (HTTP 401).
	CodeUnauthorized = -31401
	// CodeRateLimited: the key's rate limit or quota is exhausted (HTTP 429).
	CodeRateLimited = -31429
	// CodeUnavailable: the metering store could not decide (HTTP 503).
	CodeUnavailable = -31503

	// CodeHeaderMismatch: an MCP standard header (Mcp-Method, Mcp-Name,
	// Mcp-Protocol-Version) does not match the body (the go-sdk's
	// mcp.CodeHeaderMismatch, MCP 2026-07-28).
	CodeHeaderMismatch = -32020

	codeParseError     = -32700
	codeInvalidParams  = -32602
	codeMethodNotFound = -32601
	codeInvalidRequest = -32600
	codeInternalError  = -32603
	// codeResourceNotFound is MCP's resources/read of an unknown URI.
	codeResourceNotFound = -32002
)

// rpcError is the JSON-RPC error envelope written by the middleware.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcErrorBody    `json:"error"`
}

type rpcErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// abortRPC answers with a JSON-RPC error and HTTP status, and stops the
// chain. id may be nil (written as null).
func abortRPC(c *gin.Context, status int, id json.RawMessage, code int, message string) {
	abortRPCData(c, status, id, rpcErrorBody{Code: code, Message: message})
}

// abortRPCData is abortRPC with the whole error object, data included.
func abortRPCData(c *gin.Context, status int, id json.RawMessage, e rpcErrorBody) {
	if id == nil {
		id = json.RawMessage("null")
	}
	c.Header("Content-Type", "application/json")
	c.Header("Cache-Control", "no-store")
	body, _ := sdkJSON(rpcError{JSONRPC: "2.0", ID: id, Error: e})
	c.Status(status)
	_, _ = c.Writer.Write(body)
	c.Abort()
}

// writeJSON answers status with v as JSON the way the go-sdk writes its
// messages (sdkJSON): no HTML escaping, so a text such as "?api_key=<key>"
// reaches clients as written, not as \u003ckey\u003e; no trailing newline.
func writeJSON(c *gin.Context, status int, v any) {
	b, err := sdkJSON(v)
	if err != nil {
		c.Status(http.StatusInternalServerError)
		return
	}
	c.Data(status, "application/json; charset=utf-8", b)
}

// abortJSON is writeJSON, and no further handler runs.
func abortJSON(c *gin.Context, status int, v any) {
	writeJSON(c, status, v)
	c.Abort()
}
