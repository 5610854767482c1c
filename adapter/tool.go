package adapter

import (
	"bytes"
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
	// The SDK's AddTool re-encodes both schemas, which rejects invalid
	// JSON (its panic becomes the error below); a full json.Valid pass here
	// would only repeat that. The cheap guard catches a non-object early.
	if in := bytes.TrimLeft(t.InputSchema, " \t\r\n"); len(in) == 0 || in[0] != '{' {
		return errors.New("input schema is not a JSON object")
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
		a := admissionFrom(ctx)
		if a == nil || a.call.Tool != t.Name {
			// Not through the gin gate (in-memory transports in tests).
			a = &admission{start: start, call: Call{KeyID: cred.keyID, Tool: t.Name}}
		}
		// The go-sdk runs handlers on its own goroutines and has no recovery:
		// a panic here would take the process down.
		defer func() {
			if p := recover(); p != nil {
				log.Error("tool handler panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				res, err = errorResult("internal error: the call to "+t.Name+" failed inside restmcp; it may not have reached the upstream API"), nil
			}
		}()

		if a.denied != "" {
			log.Debug("tool not in plan", "plan", a.call.Plan.Name())
			s.afterCall(ctx, a, OutcomeNotInPlan, 0, 0, false)
			return errorResult(a.denied), nil
		}

		callCtx := ctx
		if s.opts.UpstreamTimeout > 0 {
			var cancel context.CancelFunc
			callCtx, cancel = context.WithTimeout(ctx, s.opts.UpstreamTimeout)
			defer cancel()
		}

		var args json.RawMessage
		if req.Params != nil {
			args = req.Params.Arguments
		}
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		upReq, err := t.NewRequest(callCtx, args, cred.key)
		if err != nil {
			var argErr *openapi.ArgumentError
			var credErr *openapi.CredentialError
			switch {
			case errors.As(err, &argErr), errors.As(err, &credErr):
				log.Debug("tool call refused", "error", err.Error())
				s.afterCall(ctx, a, OutcomeInvalidArguments, 0, 0, true)
				return errorResult(err.Error()), nil
			default:
				log.Error("building upstream request failed", "error", redact(err.Error(), cred.key))
				s.afterCall(ctx, a, OutcomeUpstreamFailed, 0, 0, true)
				return errorResult("internal error: building the upstream request: " + redact(err.Error(), cred.key)), nil
			}
		}
		if upReq.Header.Get("User-Agent") == "" {
			upReq.Header.Set("User-Agent", s.opts.Name+"/"+s.opts.Version)
		}

		sent := time.Now()
		out := s.send(callCtx, upReq, cred.key)
		out.res = conformToOutputSchema(t, out.res)
		outcome := OutcomeOK
		switch {
		case out.failed:
			outcome = OutcomeUpstreamFailed
		case out.status < 200 || out.status > 299:
			outcome = OutcomeUpstreamError
		}
		s.metrics.upstream.WithLabelValues(string(outcome)).Observe(time.Since(sent).Seconds())
		log.Debug("tool call",
			"operation_id", t.OperationID,
			"upstream_status", out.status,
			"is_error", out.res.IsError,
			"duration_ms", time.Since(start).Milliseconds())
		s.afterCall(ctx, a, outcome, out.status, out.bytes, out.failed)
		return out.res, nil
	}
}

// errorResult is a tool result with isError set and one text item.
func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
