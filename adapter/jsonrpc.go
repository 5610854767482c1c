package adapter

import (
	"bytes"
	"encoding/json"
	"errors"

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

	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInternalError  = -32603
)

// rpcPeek is what the middleware learns from the one JSON-RPC message of a
// POST before handing the restored body to the go-sdk.
type rpcPeek struct {
	id     json.RawMessage // nil for notifications and responses
	method string          // "" for responses
	tool   string          // params.name of a tools/call
}

// isToolsCall is true for any message naming tools/call, with or without
// an id: a malformed "notification" form must not slip past the key check
// and the meter, whatever the SDK then makes of it.
func (p *rpcPeek) isToolsCall() bool { return p != nil && p.method == "tools/call" }

// errBatch is returned by peekMessage for a JSON array.
var errBatch = errors.New("batch requests are not supported: send one JSON-RPC message per POST")

// peekMessage decodes the fields the middleware needs. Anything else about
// the message (jsonrpc version, params shape) is left to the go-sdk.
func peekMessage(body []byte) (*rpcPeek, error) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		return nil, errBatch
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		return nil, err
	}
	p := &rpcPeek{method: msg.Method}
	if len(msg.ID) > 0 && !bytes.Equal(msg.ID, []byte("null")) {
		p.id = msg.ID
	}
	if msg.Method == "tools/call" && len(msg.Params) > 0 {
		var params struct {
			Name string `json:"name"`
		}
		// A malformed params object is the SDK's to report (-32602).
		_ = json.Unmarshal(msg.Params, &params)
		p.tool = params.Name
	}
	return p, nil
}

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

// peekID returns the JSON-RPC id stored by the peek middleware, or nil.
func peekID(c *gin.Context) json.RawMessage {
	if v, ok := c.Get(ctxPeek); ok {
		if p, ok := v.(*rpcPeek); ok && p != nil {
			return p.id
		}
	}
	return nil
}
