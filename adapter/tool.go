package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/restmcp/restmcp/openapi"
)

// addTool registers t on the MCP server with its generated schemas. The SDK
// panics on a schema it cannot use (a programmer error in its view); here a
// tool comes from a user's document, so the panic becomes an error for New.
func (s *Server) addTool(t *openapi.Tool) (err error) {
	if len(t.InputSchema) == 0 {
		return errors.New("missing input schema")
	}
	if !json.Valid(t.InputSchema) {
		return errors.New("input schema is not valid JSON")
	}
	if len(t.OutputSchema) > 0 && !json.Valid(t.OutputSchema) {
		return errors.New("output schema is not valid JSON")
	}
	destructive := t.Destructive
	mt := &mcp.Tool{
		Name:        t.Name,
		Title:       t.Title,
		Description: t.Description,
		InputSchema: t.InputSchema,
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    t.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  t.Idempotent,
		},
	}
	// Only a non-empty schema: a nil json.RawMessage in the interface field
	// would be sent as "outputSchema": null.
	if len(t.OutputSchema) > 0 {
		mt.OutputSchema = t.OutputSchema
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	s.mcp.AddTool(mt, s.toolHandler(t))
	return nil
}

// toolHandler returns the go-sdk handler for one tool: build the upstream
// request, send it, map the response. Every failure of the call itself is a
// tool result with isError set (R3, R6, R7); the handler never returns a
// protocol error.
func (s *Server) toolHandler(t *openapi.Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		start := time.Now()
		cred := credentialFrom(ctx)
		log := s.logger.With("tool", t.Name, "key_id", cred.keyID, "request_id", requestIDFrom(ctx))
		// The go-sdk runs handlers on its own goroutines and has no recovery:
		// a panic here would take the process down.
		defer func() {
			if p := recover(); p != nil {
				log.Error("tool handler panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				res, err = errorResult("internal error: the call to "+t.Name+" failed inside restmcp; it may not have reached the upstream API"), nil
			}
		}()

		if s.opts.UpstreamTimeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, s.opts.UpstreamTimeout)
			defer cancel()
		}

		var args json.RawMessage
		if req.Params != nil {
			args = req.Params.Arguments
		}
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		upReq, err := t.NewRequest(ctx, args, cred.key)
		if err != nil {
			var argErr *openapi.ArgumentError
			var credErr *openapi.CredentialError
			switch {
			case errors.As(err, &argErr), errors.As(err, &credErr):
				log.Debug("tool call refused", "error", err.Error())
				return errorResult(err.Error()), nil
			default:
				log.Error("building upstream request failed", "error", redact(err.Error(), cred.key))
				return errorResult("internal error: building the upstream request: " + redact(err.Error(), cred.key)), nil
			}
		}
		if upReq.Header.Get("User-Agent") == "" {
			upReq.Header.Set("User-Agent", s.opts.Name+"/"+s.opts.Version)
		}

		res, status := s.send(ctx, upReq, cred.key)
		res = conformToOutputSchema(t, res)
		log.Debug("tool call",
			"operation_id", t.OperationID,
			"upstream_status", status,
			"is_error", res.IsError,
			"duration_ms", time.Since(start).Milliseconds())
		return res, nil
	}
}

// errorResult is a tool result with isError set and one text item.
func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
