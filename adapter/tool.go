package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/restmcp/restmcp/internal/jsonvalue"
	"github.com/restmcp/restmcp/metering"
	"github.com/restmcp/restmcp/openapi"
)

// listedTool checks t's schemas and returns it as tools/list shows it. The
// rules are the ones the go-sdk's AddTool enforces (MCP 2025-06-18
// "Tool": inputSchema is a JSON Schema object with "type": "object";
// outputSchema, when present, is JSON), checked here once per tool with one
// validating decode instead of the SDK's encode and two decodes per schema.
// Errors name the schema and what is wrong.
func listedTool(t *openapi.Tool) (*mcp.Tool, error) {
	if len(t.InputSchema) == 0 {
		return nil, errors.New("missing input schema")
	}
	if !json.Valid(t.InputSchema) {
		var v any
		return nil, fmt.Errorf("input schema: %w", json.Unmarshal(t.InputSchema, &v))
	}
	// The root's type, read without decoding the schema.
	var typ any
	if root, ok := jsonvalue.Members(t.InputSchema); ok {
		for _, m := range root {
			if m.Key == "type" {
				typ, _ = jsonvalue.Parse(m.Raw)
			}
		}
	}
	if typ != "object" {
		return nil, fmt.Errorf(`input schema must have type "object" (got %v)`, typ)
	}
	if len(t.OutputSchema) > 0 && !json.Valid(t.OutputSchema) {
		return nil, errors.New("output schema is not valid JSON")
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
			OpenWorldHint:   t.OpenWorld,
		},
	}
	// Only a non-empty schema: a nil json.RawMessage in the interface field
	// would be sent as "outputSchema": null.
	if len(t.OutputSchema) > 0 {
		mt.OutputSchema = t.OutputSchema
	}
	return mt, nil
}

// toolMethods is the innermost go-sdk receiving middleware: it answers
// tools/list and tools/call from the adapter's own tool table and passes
// every other method to the SDK. The tools are not registered with the
// SDK's AddTool, which encodes every schema and decodes it twice to check
// it: on a large document (Kubernetes: 1,123 tools, 24 MB of schemas) that
// was most of the time from start to ready. The answers match the SDK's:
// every tool in one page sorted by name, cache scope "public", an unknown
// tool as JSON-RPC invalid params, and content [] rather than null.
func (s *Server) toolMethods(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			r, ok := req.(*mcp.ListToolsRequest)
			if !ok {
				break
			}
			if r.Params != nil && r.Params.Cursor != "" {
				// Every tool is in the first page, so no cursor was ever issued.
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor: every tool is listed in the first page"}
			}
			res := &mcp.ListToolsResult{Tools: s.tableFor(ctx).listed}
			res.CacheScope = "public"
			return res, nil
		case "tools/call":
			r, ok := req.(*mcp.CallToolRequest)
			if !ok {
				break
			}
			if r.Params == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call without params"}
			}
			if origin := exchangeFrom(ctx); origin.sse != nil {
				// A legacy SSE session: no gate ran on this message's POST.
				var a *admission
				var err error
				if ctx, a, err = s.admitLegacy(ctx, origin, r.Params.Name); err != nil {
					return nil, err
				}
				if a != nil {
					defer func() {
						if a.settle() && a.metered {
							s.settleUnrun(ctx, a)
						}
						a.done()
					}()
				}
			}
			h, ok := s.tableFor(ctx).handlers[r.Params.Name]
			if !ok {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", r.Params.Name)}
			}
			res, err := h(ctx, r)
			if err == nil && res != nil && res.Content == nil {
				res.Content = []mcp.Content{}
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

// toolHandler returns the go-sdk handler for one tool: build the upstream
// request, send it, map the response. Every failure of the call itself is a
// tool result with isError set (R3, R6, R7); the handler never returns a
// protocol error.
func (s *Server) toolHandler(t *openapi.Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		ex := exchangeFrom(ctx)
		cred := ex.cred
		// The call's logger is made only when something is logged: With
		// costs a dozen allocations a call.
		log := func() *slog.Logger {
			return s.logger.With("tool", t.Name, "key_id", cred.keyID, "request_id", ex.requestID)
		}
		a := ex.admission
		if a == nil || a.call.Tool != t.Name || !a.forKey(cred.keyID) || !a.take() {
			// Defence in depth: the gate admits every tools/call it reads, so
			// a call here without its own admission means the gate and the
			// SDK read the request differently. Refuse it, never serve it.
			log().Error("bug: tools/call reached the tool handler without an admission for this tool and key; refused", "admitted_tool", admittedTool(a))
			return nil, &jsonrpc.Error{Code: codeInternalError, Message: "internal error: the call was not admitted; it was not run"}
		}
		// The go-sdk runs handlers on its own goroutines and has no recovery:
		// a panic here would take the process down.
		defer func() {
			if p := recover(); p != nil {
				log().Error("tool handler panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				res, err = errorResult("internal error: the call to "+t.Name+" failed inside restmcp; it may not have reached the upstream API"), nil
			}
		}()

		if a.denied != "" {
			if s.logger.Enabled(ctx, slog.LevelDebug) {
				log().Debug("tool not in plan", "plan", a.call.Plan.Name)
			}
			s.afterCall(ctx, a, metering.OutcomeNotInPlan, 0, 0, false)
			ex.call.isError = true
			return errorResult(a.denied), nil
		}

		// One context for the upstream call: its timeout, and stop for a
		// client that hung up.
		var callCtx context.Context
		var stop context.CancelFunc
		if s.opts.UpstreamTimeout > 0 {
			callCtx, stop = context.WithTimeout(ctx, s.opts.UpstreamTimeout)
		} else {
			callCtx, stop = context.WithCancel(ctx)
		}
		defer stop()
		// A client that hung up gets no answer: stop its upstream call
		// rather than hold a goroutine and a connection for it. So does a
		// shutdown that ran out of time (HaltCalls).
		s.running.Add(1)
		defer s.running.Done()
		var halted atomic.Bool
		defer context.AfterFunc(s.halt, func() { halted.Store(true); stop() })()
		if ex.clientGone != nil && ex.clientGone != ctx.Done() {
			// The go-sdk's handler context (legacy SSE, a resumed stream)
			// does not end with the HTTP request; the fast path's is the
			// request's own, so callCtx ends with it already.
			go func() {
				select {
				case <-ex.clientGone:
					stop()
				case <-callCtx.Done():
				}
			}()
		}

		upReq, jq, args, refused := s.buildUpstream(ctx, callCtx, t, req, a, ex, log)
		if refused != nil {
			return refused, nil
		}
		upReq, idem, wrote := prepareSend(t, upReq)
		sentAt := time.Now()
		span := s.startUpstreamSpan(callCtx, t, upReq)
		link := s.linker(ctx, t, a, args) // assigned once: the closure below copies it
		mapResp := func(resp *http.Response) (*mcp.CallToolResult, error) {
			return s.mapResponse(resp, t, link, ex.writesDirect)
		}
		if jq != nil {
			mapResp = func(resp *http.Response) (*mcp.CallToolResult, error) { return s.mapFiltered(callCtx, resp, t, jq) }
		}
		upKey := ex.upstreamCred().key
		out := s.send(callCtx, upReq, upKey, mapResp)
		if out.async != nil && ex.takesTasks {
			// The client takes tasks: the job is its task from now on,
			// answered by fastCall as a CreateTaskResult. Past a cap (or
			// for an anonymous caller) the call is waited for instead.
			ex.task, _ = s.newTask(ctx, t, a, out.async, 0)
		}
		if out.async != nil && ex.task == nil {
			out = s.awaitJob(callCtx, t, a, upReq, out, upKey, mapResp)
		}
		endUpstreamSpan(span, out.status, out.failed)
		if out.failed && halted.Load() {
			return s.halted(ctx, a), nil
		}
		out.res = conformToOutputSchema(t, out.res, s.opts.ErrorStructuredContent)
		if idem != nil || wrote != nil {
			noteSend(out.res, out.failed, idem, wrote)
		}
		return s.finishCall(ctx, t, a, ex, out, sentAt, log), nil
	}
}

// buildUpstream turns the call's arguments into the upstream request, with
// the jq filter the call asked for (taken out of the arguments) and the
// arguments as sent; a refusal (invalid arguments, a missing credential,
// a request that cannot be built) is the call's result, already settled.
func (s *Server) buildUpstream(ctx, callCtx context.Context, t *openapi.Tool, req *mcp.CallToolRequest, a *admission, ex *exchange, log func() *slog.Logger) (*http.Request, *jqFilter, json.RawMessage, *mcp.CallToolResult) {
	cred := ex.upstreamCred()
	var args json.RawMessage
	if req.Params != nil {
		args = req.Params.Arguments
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	scheme := ""
	if cred.source == "bearer" || cred.source == sourceIdP {
		scheme = "Bearer"
	}
	var jq *jqFilter
	var err error
	if s.opts.JQFilter && t.RespondsJSON() {
		jq, args, err = takeJQFilter(args)
	}
	var upReq *http.Request
	if err == nil {
		upReq, err = t.NewRequestPresented(withUpstreamCaller(callCtx, cred.key), args, cred.key, scheme)
	}
	if err != nil {
		var argErr *openapi.ArgumentError
		var credErr *openapi.CredentialError
		switch {
		case errors.As(err, &argErr), errors.As(err, &credErr):
			if s.logger.Enabled(ctx, slog.LevelDebug) {
				log().Debug("tool call refused", "error", err.Error())
			}
			s.afterCall(ctx, a, metering.OutcomeInvalidArguments, 0, 0, true)
			ex.call.isError = true
			return nil, nil, nil, errorResult(err.Error())
		default:
			log().Error("building upstream request failed", "error", redact(err.Error(), cred.key))
			s.afterCall(ctx, a, metering.OutcomeUpstreamFailed, 0, 0, true)
			ex.call.isError = true
			return nil, nil, nil, errorResult("internal error: building the upstream request: " + redact(err.Error(), cred.key))
		}
	}
	for name, vs := range ex.forward {
		if _, own := upReq.Header[name]; !own {
			upReq.Header[name] = vs
		}
	}
	upReq.Header.Set("Accept-Encoding", acceptEncoding) // R9
	if upReq.Header.Get("User-Agent") == "" {
		upReq.Header.Set("User-Agent", s.userAgent)
	}
	return upReq, jq, args, nil
}

// finishCall records what the upstream call came to (its outcome in the
// metrics, the exchange and the after-call work: usage, refund, event) and
// completes its result (timing in _meta when asked).
func (s *Server) finishCall(ctx context.Context, t *openapi.Tool, a *admission, ex *exchange, out sent, sentAt time.Time, log func() *slog.Logger) *mcp.CallToolResult {
	outcome := metering.OutcomeOK
	switch {
	case out.failed:
		outcome = metering.OutcomeUpstreamFailed
	case out.status < 200 || out.status > 299:
		outcome = metering.OutcomeUpstreamError
	}
	took := time.Since(sentAt)
	s.metrics.upstream.WithLabelValues(string(outcome)).Observe(took.Seconds())
	ex.call.status, ex.call.isError, ex.call.upstream = out.status, out.res.IsError, took
	if s.logger.Enabled(ctx, slog.LevelDebug) {
		log().Debug("tool call",
			"operation_id", t.OperationID,
			"upstream_status", out.status,
			"is_error", out.res.IsError,
			"duration_ms", time.Since(a.start).Milliseconds())
	}
	s.afterCall(ctx, a, outcome, out.status, out.bytes, out.failed)
	if s.opts.TimingMeta {
		if out.res.Meta == nil {
			out.res.Meta = mcp.Meta{}
		}
		out.res.Meta[metaKeyTiming] = map[string]float64{
			"meter_ms": milliseconds(ex.call.meter), "upstream_ms": milliseconds(took), "total_ms": milliseconds(time.Since(a.start)),
		}
	}
	return out.res
}

// forKey reports whether a was made for the caller with key id keyID ("" for
// no key: an anonymous admission).
func (a *admission) forKey(keyID string) bool {
	if keyID == "" {
		return a.anonymous
	}
	return !a.anonymous && a.call.KeyID == keyID
}

func admittedTool(a *admission) string {
	if a == nil {
		return ""
	}
	return a.call.Tool
}

// errorResult is a tool result with isError set and one text item.
func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
