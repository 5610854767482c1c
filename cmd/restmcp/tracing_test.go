package main

import (
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/restmcp/restmcp/config"
	"github.com/restmcp/restmcp/metering"
	"github.com/restmcp/restmcp/openapi"
)

// otlpCollector is an in-process OTLP/HTTP trace receiver.
type otlpCollector struct {
	*httptest.Server
	mu    sync.Mutex
	spans []*tracepb.Span
}

func newOTLPCollector(t *testing.T) *otlpCollector {
	c := &otlpCollector{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &req) != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				c.spans = append(c.spans, ss.Spans...)
			}
		}
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		_, _ = w.Write(b)
	}))
	t.Cleanup(c.Close)
	return c
}

// spanAttrs are a span's attributes as strings.
func spanAttrs(s *tracepb.Span) map[string]string {
	out := map[string]string{}
	for _, kv := range s.Attributes {
		v := kv.Value
		switch {
		case v.GetStringValue() != "":
			out[kv.Key] = v.GetStringValue()
		default:
			out[kv.Key] = strings.TrimSpace(strings.TrimPrefix(v.String(), "int_value:"))
		}
	}
	return out
}

// TestTracingExportsOneToolsCall: with OTEL_EXPORTER_OTLP_ENDPOINT set, one
// tools/call that carries a traceparent is exported to an OTLP collector
// as a server span in the caller's trace ("tools/call get_quote", with the
// meter's admission as an event) and a client span for the upstream call
// ("GET /quotes/{symbol}"), whose traceparent the upstream receives. No
// attribute holds the key.
func TestTracingExportsOneToolsCall(t *testing.T) {
	collector := newOTLPCollector(t)
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL, "OTEL_SERVICE_NAME": "restmcp-test"}
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	tp, stop, err := setupTracing(ctx, func(k string) string { return env[k] }, logger)
	if err != nil || tp == nil {
		t.Fatalf("setupTracing: %v, %v", tp, err)
	}

	var upMu sync.Mutex
	var upTraceparent string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upMu.Lock()
		upTraceparent = r.Header.Get("Traceparent")
		upMu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	defer up.Close()
	cfgEnv := map[string]string{"RESTMCP_SPEC": "testdata/plans_api.yaml", "RESTMCP_UPSTREAM": up.URL}
	cfg, err := config.Load(nil, func(k string) string { return cfgEnv[k] })
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi.Load(ctx, cfg.Spec, openapi.LoadOptions{Upstream: cfg.Upstream})
	if err != nil {
		t.Fatal(err)
	}
	url, _, _ := serveWired(t, cfg, doc, logger, tp)

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(callBody(1, "get_quote", `{"symbol":"A"}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-API-Key", "secret-key-123")
	req.Header.Set("Traceparent", "00-"+traceID+"-"+parentID+"-01")
	if got := doHTTP(t, req); got.status != 200 || !strings.Contains(got.body, `"structuredContent":{"ok":true}`) {
		t.Fatalf("tools/call: %d %s", got.status, got.body)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := stop(sctx); err != nil {
		t.Fatal(err)
	}

	collector.mu.Lock()
	spans := collector.spans
	collector.mu.Unlock()
	if len(spans) != 2 {
		t.Fatalf("%d spans exported, want 2: %v", len(spans), spans)
	}
	server, client := spans[0], spans[1]
	if server.Kind != tracepb.Span_SPAN_KIND_SERVER {
		server, client = client, server
	}
	hexID := func(b []byte) string { return hex.EncodeToString(b) }
	if server.Name != "tools/call get_quote" || server.Kind != tracepb.Span_SPAN_KIND_SERVER || hexID(server.TraceId) != traceID || hexID(server.ParentSpanId) != parentID {
		t.Errorf("server span: %q kind %v trace %s parent %s", server.Name, server.Kind, hexID(server.TraceId), hexID(server.ParentSpanId))
	}
	wantServer := map[string]string{
		"http.request.method": "POST", "url.path": "/mcp", "http.response.status_code": "200",
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "get_quote", "jsonrpc.request.id": "1",
		"restmcp.key_id": metering.KeyID("secret-key-123"), "restmcp.outcome": "ok", "restmcp.is_error": "bool_value:false",
	}
	if got := spanAttrs(server); !mapsEqual(got, wantServer) {
		t.Errorf("server span attributes:\n got %v\nwant %v", got, wantServer)
	}
	if len(server.Events) != 1 || server.Events[0].Name != "meter admission" {
		t.Errorf("server span events: %v", server.Events)
	} else if got, want := spanAttrs(&tracepb.Span{Attributes: server.Events[0].Attributes}), map[string]string{
		"restmcp.meter.decision": "allowed", "restmcp.tool": "get_quote", "restmcp.cost": "1", "restmcp.plan": "default",
	}; !mapsEqual(got, want) {
		t.Errorf("admission event attributes:\n got %v\nwant %v", got, want)
	}
	if client.Name != "GET /quotes/{symbol}" || client.Kind != tracepb.Span_SPAN_KIND_CLIENT || hexID(client.TraceId) != traceID || hexID(client.ParentSpanId) != hexID(server.SpanId) {
		t.Errorf("client span: %q kind %v parent %s (server %s)", client.Name, client.Kind, hexID(client.ParentSpanId), hexID(server.SpanId))
	}
	wantClient := map[string]string{
		"http.request.method": "GET", "url.template": "/quotes/{symbol}", "server.address": "127.0.0.1",
		"restmcp.operation_id": "getQuote", "http.response.status_code": "200",
	}
	if got := spanAttrs(client); !mapsEqual(got, wantClient) {
		t.Errorf("client span attributes:\n got %v\nwant %v", got, wantClient)
	}
	upMu.Lock()
	defer upMu.Unlock()
	if want := "00-" + traceID + "-" + hexID(client.SpanId) + "-01"; upTraceparent != want {
		t.Errorf("upstream traceparent %q, want %q", upTraceparent, want)
	}
	for _, s := range spans {
		for _, kv := range s.Attributes {
			if strings.Contains(kv.Value.String(), "secret-key-123") {
				t.Errorf("span %s attribute %s holds the key", s.Name, kv.Key)
			}
		}
	}
}

// TestTracingOffByDefault: without OTEL_* variables there is no tracer
// provider; OTEL_SDK_DISABLED and an exporter other than otlp are handled.
func TestTracingOffByDefault(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, env := range []map[string]string{{}, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "true"}, {"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}} {
		tp, _, err := setupTracing(context.Background(), func(k string) string { return env[k] }, logger)
		if tp != nil || err != nil {
			t.Errorf("%v: %v, %v; want off", env, tp, err)
		}
	}
	_, _, err := setupTracing(context.Background(), func(k string) string { return map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}[k] }, logger)
	if err == nil || err.Error() != "OTEL_TRACES_EXPORTER=zipkin: restmcp exports traces over OTLP only (otlp or none)" {
		t.Errorf("zipkin: %v", err)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
