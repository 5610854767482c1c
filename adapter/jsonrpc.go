package adapter

import (
	"encoding/json"

	"github.com/gin-gonic/gin"
)

// JSON-RPC error codes restmcp answers with before the MCP handler runs.
// The -32000…-32099 range is reserved for implementation-defined server
// errors; these avoid the codes the go-sdk already uses there
// (-32002, -32020…-32022, -32042).
const (
	// CodeUnauthorized: tools/call without an API key (HTTP 401).
	CodeUnauthorized = -32001
	// CodeRateLimited: the key's rate limit or quota is exhausted (HTTP 429).
	CodeRateLimited = -32029
	// CodeUnavailable: the metering store could not be reached (HTTP 503).
	CodeUnavailable = -32030

	// CodeHeaderMismatch: an MCP standard header (Mcp-Method, Mcp-Name,
	// Mcp-Protocol-Version) does not match the body (the go-sdk's
	// mcp.CodeHeaderMismatch, MCP 2026-07-28).
	CodeHeaderMismatch = -32020

	codeParseError     = -32700
	codeInvalidParams  = -32602
	codeMethodNotFound = -32601
	codeInvalidRequest = -32600
	codeInternalError  = -32603
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
}

// abortRPC answers with a JSON-RPC error and HTTP status, and stops the
// chain. id may be nil (written as null).
func abortRPC(c *gin.Context, status int, id json.RawMessage, code int, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	c.Header("Content-Type", "application/json")
	c.Header("Cache-Control", "no-store")
	body, _ := json.Marshal(rpcError{JSONRPC: "2.0", ID: id, Error: rpcErrorBody{Code: code, Message: message}})
	c.Status(status)
	_, _ = c.Writer.Write(body)
	c.Abort()
}
