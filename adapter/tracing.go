package adapter

import (
	"context"
	"net/http"
	"net/url"

	"github.com/restmcp/restmcp/internal/clip"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/restmcp/restmcp/metering"
	"github.com/restmcp/restmcp/openapi"
)

// tracerName names restmcp's instrumentation scope.
const tracerName = "github.com/restmcp/restmcp/adapter"

// propagator reads and writes W3C Trace Context (traceparent, tracestate;
// https://www.w3.org/TR/trace-context/).
var propagator = propagation.TraceContext{}

// newTracer is the tracer of tp; nil without one (tracing off costs
// nothing then: no middleware, no span, no propagation).
func newTracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return nil
	}
	return tp.Tracer(tracerName)
}

// traceMCP starts one server span per request to an MCP endpoint, a child
// of the caller's traceparent when it sent one, and names it after the
// JSON-RPC method and tool once they are known ("tools/call get_quote",
// following the OpenTelemetry MCP semantic conventions,
// https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/). Attributes name
// the method, tool, request id and outcome; never a key or token.
func (s *Server) traceMCP(c *gin.Context) {
	ctx := propagator.Extract(c.Request.Context(), propagation.HeaderCarrier(c.Request.Header))
	ctx, span := s.tracer.Start(ctx, "mcp "+c.Request.Method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", c.Request.Method), attribute.String("url.path", c.Request.URL.Path)))
	c.Request = c.Request.WithContext(ctx)
	c.Next()
	if !span.IsRecording() {
		span.End()
		return
	}
	ex := exchangeFrom(ctx)
	attrs := []attribute.KeyValue{attribute.Int("http.response.status_code", c.Writer.Status())}
	if m := ex.msg; m != nil && m.method != "" {
		name := m.method
		attrs = append(attrs, attribute.String("mcp.method.name", clip.String(m.method, maxLoggedField)))
		if m.tool != "" {
			name += " " + clip.String(m.tool, maxLoggedField)
			attrs = append(attrs, attribute.String("gen_ai.tool.name", clip.String(m.tool, maxLoggedField)))
		}
		if ex.inner != nil && ex.inner.name != "" {
			attrs = append(attrs, attribute.String("restmcp.operation", clip.String(ex.inner.name, maxLoggedField)))
		}
		if m.id != nil {
			attrs = append(attrs, attribute.String("jsonrpc.request.id", clip.String(string(m.id), 64)))
		}
		span.SetName(name)
	}
	if ex.cred.keyID != "" {
		attrs = append(attrs, attribute.String("restmcp.key_id", ex.cred.keyID))
	}
	if r := ex.call; r.outcome != "" {
		attrs = append(attrs, attribute.String("restmcp.outcome", string(r.outcome)), attribute.Bool("restmcp.is_error", r.isError))
		if r.isError || r.outcome != metering.OutcomeOK {
			span.SetStatus(codes.Error, string(r.outcome))
		}
	}
	if c.Writer.Status() >= 500 {
		span.SetStatus(codes.Error, http.StatusText(c.Writer.Status()))
	}
	span.SetAttributes(attrs...)
	span.End()
}

// traceAdmission records a Meter's answer as an event of the request's
// span.
func traceAdmission(ctx context.Context, call metering.Call, d metering.Decision, err error) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{
		attribute.String("restmcp.meter.decision", decisionName(d, err)),
		attribute.String("restmcp.tool", call.Tool),
		attribute.Int64("restmcp.cost", call.Cost),
	}
	if call.Plan != nil {
		attrs = append(attrs, attribute.String("restmcp.plan", call.Plan.Name))
	}
	if d.RefusedBy != "" {
		attrs = append(attrs, attribute.String("restmcp.meter.refused_by", d.RefusedBy))
	}
	span.AddEvent("meter admission", trace.WithAttributes(attrs...))
}

// startUpstreamSpan starts the client span of an upstream call and puts
// its traceparent on req. The span is named after the method and the
// path template (the URL itself may carry the key in its query, so it is
// never an attribute).
func (s *Server) startUpstreamSpan(ctx context.Context, t *openapi.Tool, req *http.Request) trace.Span {
	if s.tracer == nil {
		return nil
	}
	_, span := s.tracer.Start(ctx, t.Method+" "+t.PathTemplate, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("http.request.method", t.Method),
			attribute.String("url.template", t.PathTemplate),
			attribute.String("server.address", hostOf(req.URL)),
			attribute.String("restmcp.operation_id", t.OperationID),
		))
	if span.IsRecording() {
		propagator.Inject(trace.ContextWithSpan(ctx, span), propagation.HeaderCarrier(req.Header))
	}
	return span
}

// endUpstreamSpan ends an upstream span with the response status (0: no
// response).
func endUpstreamSpan(span trace.Span, status int, failed bool) {
	if span == nil {
		return
	}
	if status != 0 {
		span.SetAttributes(attribute.Int("http.response.status_code", status))
	}
	if failed || status >= 500 {
		span.SetStatus(codes.Error, "upstream failed")
	}
	span.End()
}

func hostOf(u *url.URL) string { return u.Hostname() }
