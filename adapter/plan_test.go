package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/restmcp/restmcp/metering"
)

// testPlan is a metering plan named name that allows tools (every tool
// when none is given), at cost 1 unless the operation sets its own, with an
// upgrade URL.
func testPlan(name string, tools ...string) *metering.Plan {
	doc := fmt.Sprintf("default_plan: %[1]s\nplans:\n  %[1]s:\n    upgrade: {url: \"https://example.com/pricing\"}\n", name)
	if len(tools) > 0 {
		doc += fmt.Sprintf("    tools: [%s]\n", strings.Join(tools, ", "))
	}
	ps, err := metering.ParsePlans([]byte(doc), "test plans")
	if err != nil {
		panic(err)
	}
	return ps.Plan(name)
}

// fakeKeys resolves keys from a map; "revoked" is revoked, "down" fails.
type fakeKeys map[string]*metering.Plan

func (k fakeKeys) ResolveKey(_ context.Context, key string) (*metering.Plan, error) {
	switch key {
	case "revoked":
		return nil, fmt.Errorf("%w: key_id x", metering.ErrRevokedKey)
	case "down":
		return nil, errors.New("dial tcp 10.0.0.7:6379: connection refused")
	case "":
		return testPlan("free"), nil
	}
	if p, ok := k[key]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("%w: key_id x", metering.ErrUnknownKey)
}

// planUpstream answers /fail with 500 and everything else with a small
// JSON object, recording the paths it saw.
type planUpstream struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newPlanUpstream(t testing.TB) *planUpstream {
	u := &planUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.paths = append(u.paths, r.URL.Path)
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"error":"boom"}`)
			return
		}
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *planUpstream) take() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	p := u.paths
	u.paths = nil
	return p
}

func allowedDecision(metering.Call) (metering.Decision, error) {
	return metering.Decision{Allowed: true, Limit: 30, Remaining: 29, Reset: 2 * time.Second, Policy: "per_minute", Window: time.Minute, Cost: 1}, nil
}

func planKeys() fakeKeys {
	return fakeKeys{
		"k-free": testPlan("free", "get_quote", "always_fails"),
		"k-pro":  testPlan("pro"),
	}
}

func TestUnknownAndRevokedKeys(t *testing.T) {
	up := newPlanUpstream(t)
	meter := &fakeMeter{admit: allowedDecision}
	srv := serve(t, Options{Tools: loadTools(t, "testdata/plans_api.yaml", up.URL), Keys: planKeys(), Meter: meter})
	tests := []struct {
		name, key  string
		wantStatus int
		wantBody   string
	}{
		{"unknown", "k-nobody", 401, `{"jsonrpc":"2.0","id":1,"error":{"code":-31401,"message":"unknown API key (key_id ` + metering.KeyID("k-nobody") + `): this server does not know the key; check it, or ask the API provider for a key, and send it in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>"}}`},
		{"revoked", "revoked", 401, `{"jsonrpc":"2.0","id":1,"error":{"code":-31401,"message":"API key revoked (key_id ` + metering.KeyID("revoked") + `): this key no longer works; ask the API provider for a new key and send it in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>"}}`},
		{"store down", "down", 503, `{"jsonrpc":"2.0","id":1,"error":{"code":-31503,"message":"API key check is temporarily unavailable; retry in 5 seconds"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := post(t, srv.URL+"/mcp", toolsCallBody(1, "get_quote", `{"symbol":"AAPL"}`), map[string]string{"X-API-Key": tt.key})
			if got.status != tt.wantStatus || got.body != tt.wantBody {
				t.Errorf("got %d %s\nwant %d %s", got.status, got.body, tt.wantStatus, tt.wantBody)
			}
			if tt.wantStatus == 401 {
				if g, w := got.header.Get("WWW-Authenticate"), `ApiKey realm="restmcp", Bearer realm="restmcp", error="invalid_token"`; g != w {
					t.Errorf("WWW-Authenticate = %q, want %q", g, w)
				}
			} else if g := got.header.Get("Retry-After"); g != "5" {
				t.Errorf("Retry-After = %q, want 5", g)
			}
		})
	}
	if n := meter.calls.Load(); n != 0 {
		t.Errorf("meter called %d times, want 0", n)
	}
	if p := up.take(); len(p) != 0 {
		t.Errorf("upstream saw %v, want nothing", p)
	}
}

func TestToolOutsidePlan(t *testing.T) {
	up := newPlanUpstream(t)
	meter := &fakeMeter{admit: allowedDecision}
	srv, s := serveServer(t, Options{Tools: loadTools(t, "testdata/plans_api.yaml", up.URL), Keys: planKeys(), Meter: meter})
	got := post(t, srv.URL+"/mcp", toolsCallBody(9, "admin_stats", `{}`), map[string]string{"X-API-Key": "k-free"})
	want := `{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"tool \"admin_stats\" is not included in plan \"free\". Upgrade: https://example.com/pricing"}],"isError":true}}`
	if got.status != 200 || strings.TrimSpace(got.body) != want {
		t.Errorf("got %d %s\nwant 200 %s", got.status, got.body, want)
	}
	if h := rateHeaders(got.header); len(h) != 0 {
		t.Errorf("rate-limit headers %v on an unmetered call", h)
	}
	if n := meter.calls.Load(); n != 0 {
		t.Errorf("meter called %d times, want 0", n)
	}
	if p := up.take(); len(p) != 0 {
		t.Errorf("upstream saw %v, want nothing", p)
	}
	ev := meter.settledEvents(t, s, 1)
	if len(ev) != 1 || ev[0].Outcome != metering.OutcomeNotInPlan || ev[0].Cost != 0 || ev[0].Plan != "free" || ev[0].Tool != "admin_stats" || ev[0].KeyID != metering.KeyID("k-free") {
		t.Errorf("events = %+v, want one not_in_plan event of cost 0", ev)
	}
}

func TestCountingSuccessRefunds(t *testing.T) {
	up := newPlanUpstream(t)
	for _, counting := range []metering.Counting{metering.CountSuccess, metering.CountAdmitted, ""} {
		refund := counting == metering.CountSuccess
		t.Run(fmt.Sprintf("Counting=%q", counting), func(t *testing.T) {
			meter := &fakeMeter{admit: allowedDecision}
			srv, s := serveServer(t, Options{Tools: loadTools(t, "testdata/plans_api.yaml", up.URL), Keys: planKeys(), Meter: meter, Counting: counting})
			key := map[string]string{"X-API-Key": "k-free"}
			post(t, srv.URL+"/mcp", toolsCallBody(1, "always_fails", `{}`), key)
			meter.awaitEvents(t, 1)
			post(t, srv.URL+"/mcp", toolsCallBody(2, "get_quote", `{"symbol":"AAPL"}`), key)
			meter.awaitEvents(t, 2)
			post(t, srv.URL+"/mcp", toolsCallBody(3, "get_quote", `{}`), key) // invalid: never sent
			events := meter.settledEvents(t, s, 3)
			wantRefunds := int64(0)
			if refund {
				wantRefunds = 2
			}
			if g := meter.refunds.Load(); g != wantRefunds {
				t.Errorf("refunds = %d, want %d", g, wantRefunds)
			}
			type ev struct {
				Tool    string
				Cost    int64
				Outcome metering.Outcome
				Status  int
				Bytes   int64
			}
			var got []ev
			for _, e := range events {
				got = append(got, ev{e.Tool, e.Cost, e.Outcome, e.UpstreamStatus, e.Bytes})
			}
			failCost := int64(1)
			if refund {
				failCost = 0
			}
			want := []ev{
				{"always_fails", failCost, metering.OutcomeUpstreamError, 500, 16},
				{"get_quote", 1, metering.OutcomeOK, 200, 11},
				{"get_quote", failCost, metering.OutcomeInvalidArguments, 0, 0},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRateLimitPolicyAndQuotaRefusal(t *testing.T) {
	up := newPlanUpstream(t)
	var refuse bool
	var mu sync.Mutex
	meter := &fakeMeter{admit: func(c metering.Call) (metering.Decision, error) {
		mu.Lock()
		defer mu.Unlock()
		if c.Cost != 5 {
			t.Errorf("cost of etfs_top_holdings = %d, want 5 (x-restmcp-cost)", c.Cost)
		}
		if refuse {
			return metering.Decision{Limit: 100, Reset: 3 * time.Hour, RetryAfter: 3*time.Hour - 500*time.Millisecond,
				Policy: "day", RefusedBy: "day", Window: 24 * time.Hour}, nil
		}
		return allowedDecision(c)
	}}
	srv, s := serveServer(t, Options{Tools: loadTools(t, "testdata/plans_api.yaml", up.URL), Keys: planKeys(), Meter: meter})
	key := map[string]string{"X-API-Key": "k-pro"}
	got := post(t, srv.URL+"/mcp", toolsCallBody(1, "etfs_top_holdings", `{"symbol":"SPY"}`), key)
	want := map[string]string{"RateLimit-Limit": "30", "RateLimit-Remaining": "29", "RateLimit-Reset": "2",
		"X-RateLimit-Limit": "30", "X-RateLimit-Remaining": "29", "X-RateLimit-Reset": "2"}
	if diff := cmp.Diff(want, rateHeaders(got.header)); got.status != 200 || diff != "" {
		t.Errorf("status %d; rate-limit headers (-want +got):\n%s", got.status, diff)
	}
	if g, w := got.header.Get("RateLimit-Policy"), `30;w=60;policy="per_minute"`; g != w {
		t.Errorf("RateLimit-Policy = %q, want %q", g, w)
	}
	meter.awaitEvents(t, 1)
	mu.Lock()
	refuse = true
	mu.Unlock()
	got = post(t, srv.URL+"/mcp", toolsCallBody(2, "etfs_top_holdings", `{"symbol":"SPY"}`), key)
	wantBody := `{"jsonrpc":"2.0","id":2,"error":{"code":-31429,"message":"quota exceeded: the day quota of plan \"pro\" is 100 units; retry after 10800 seconds, when the next day starts (UTC), or upgrade: https://example.com/pricing"}}`
	if got.status != 429 || got.body != wantBody || got.header.Get("Retry-After") != "10800" || got.header.Get("RateLimit-Policy") != `100;w=86400;policy="day"` {
		t.Errorf("got %d Retry-After %q Policy %q %s\nwant 429 10800 %s", got.status, got.header.Get("Retry-After"), got.header.Get("RateLimit-Policy"), got.body, wantBody)
	}
	ev := meter.settledEvents(t, s, 2)
	if len(ev) != 2 || ev[1].Outcome != metering.OutcomeRefused || ev[1].Cost != 0 {
		t.Errorf("events = %+v, want ok then refused", ev)
	}
}

func TestUsageEndpoint(t *testing.T) {
	wantReport := `{"key_id":"` + metering.KeyID("k-free") + `","plan":"free","time":"2026-11-01T00:00:00Z","rate_limits":[],"periods":[{"period":"month","name":"202611","start":"2026-11-01T00:00:00Z","reset":"2026-12-01T00:00:00Z","used":1,"limit":-1,"remaining":-1}]}`
	up := newPlanUpstream(t)
	meter := &fakeMeter{admit: allowedDecision}
	srv := serve(t, Options{Tools: loadTools(t, "testdata/plans_api.yaml", up.URL), Keys: planKeys(), Meter: meter})
	get := func(path string, h map[string]string) rpcResponse {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		return do(t, req)
	}
	post(t, srv.URL+"/mcp", toolsCallBody(1, "get_quote", `{"symbol":"AAPL"}`), map[string]string{"X-API-Key": "k-free"})
	tests := []struct {
		name       string
		path       string
		h          map[string]string
		wantStatus int
		wantBody   string
	}{
		{"no key", "/usage", nil, 401, `{"error":"authentication required: send your API key in the x-api-key header, as ?api_key=<key>, or as Authorization: Bearer <key>"}`},
		{"unknown key", "/usage?api_key=k-nobody", nil, 401, `{"error":"unknown API key (key_id ` + metering.KeyID("k-nobody") + `): this server does not know the key; check it, or ask the API provider for a key, and send it in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>"}`},
		{"header", "/usage", map[string]string{"X-API-Key": "k-free"}, 200, wantReport},
		{"bearer", "/usage", map[string]string{"Authorization": "Bearer k-free"}, 200, wantReport},
		{"query", "/usage?api_key=k-free", nil, 200, wantReport},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := get(tt.path, tt.h)
			if got.status != tt.wantStatus || got.body != tt.wantBody {
				t.Errorf("GET %s = %d %s\nwant %d %s", tt.path, got.status, got.body, tt.wantStatus, tt.wantBody)
			}
			if got.header.Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control = %q, want no-store", got.header.Get("Cache-Control"))
			}
		})
	}
}

func TestListByPlanRaw(t *testing.T) {
	up := newPlanUpstream(t)
	srv := serve(t, Options{Tools: loadTools(t, "testdata/plans_api.yaml", up.URL), Keys: planKeys(), ListByPlan: true})
	names := func(body string) []string {
		res, _ := decodeRPC(t, body)["result"].(map[string]any)
		tools, _ := res["tools"].([]any)
		var out []string
		for _, x := range tools {
			out = append(out, x.(map[string]any)["name"].(string))
		}
		return out
	}
	all := []string{"admin_stats", "always_fails", "etfs_top_holdings", "get_quote"}
	for _, tt := range []struct {
		key  string
		want []string
	}{
		{"", all},
		{"k-free", []string{"always_fails", "get_quote"}},
		{"k-pro", all},
		{"k-nobody", all},
	} {
		got := post(t, srv.URL+"/mcp", toolsListBody, map[string]string{"X-API-Key": tt.key})
		if diff := cmp.Diff(tt.want, names(got.body)); diff != "" {
			t.Errorf("tools/list with key %q (-want +got):\n%s", tt.key, diff)
		}
	}
}

func TestMetricsSeries(t *testing.T) {
	up := newPlanUpstream(t)
	reg := prometheus.NewRegistry()
	var n int
	var mu sync.Mutex
	meter := &fakeMeter{admit: func(c metering.Call) (metering.Decision, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		if n == 3 {
			return metering.Decision{Limit: 2, RetryAfter: time.Second, Policy: "per_second", RefusedBy: "per_second", Window: time.Second}, nil
		}
		return allowedDecision(c)
	}}
	srv, s := serveServer(t, Options{Tools: loadTools(t, "testdata/plans_api.yaml", up.URL), Keys: planKeys(), Meter: meter, Metrics: reg})
	key := map[string]string{"X-API-Key": "k-free"}
	post(t, srv.URL+"/mcp", toolsCallBody(1, "get_quote", `{"symbol":"A"}`), key)                                        // ok
	post(t, srv.URL+"/mcp", toolsCallBody(2, "always_fails", `{}`), key)                                                 // upstream_error
	post(t, srv.URL+"/mcp", toolsCallBody(3, "get_quote", `{"symbol":"A"}`), key)                                        // refused
	post(t, srv.URL+"/mcp", toolsCallBody(4, "admin_stats", `{}`), key)                                                  // not_in_plan
	post(t, srv.URL+"/mcp", toolsCallBody(5, "get_quote", `{"symbol":"A"}`), nil)                                        // unauthorized
	post(t, srv.URL+"/mcp", toolsCallBody(6, "no_such_tool", `{}`), key)                                                 // not counted
	post(t, srv.URL+"/mcp", toolsCallBody(7, "get_quote", `{}`), key)                                                    // invalid_arguments
	post(t, srv.URL+"/mcp", toolsCallBody(8, "get_quote", `{"symbol":"A"}`), map[string]string{"X-API-Key": "k-nobody"}) // unauthorized

	meter.settledEvents(t, s, 5) // every event is written: the metrics are final
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
	got := do(t, req)
	if got.status != 200 {
		t.Fatalf("GET /metrics = %d", got.status)
	}
	want := `
# HELP restmcp_tool_calls_total tools/call requests for tools of the table, by tool and outcome (ok, upstream_error, upstream_failed, refused, not_in_plan, invalid_arguments, unavailable, unauthorized).
# TYPE restmcp_tool_calls_total counter
restmcp_tool_calls_total{outcome="invalid_arguments",tool="get_quote"} 1
restmcp_tool_calls_total{outcome="not_in_plan",tool="admin_stats"} 1
restmcp_tool_calls_total{outcome="ok",tool="get_quote"} 1
restmcp_tool_calls_total{outcome="refused",tool="get_quote"} 1
restmcp_tool_calls_total{outcome="unauthorized",tool="get_quote"} 2
restmcp_tool_calls_total{outcome="upstream_error",tool="always_fails"} 1
# HELP restmcp_meter_decisions_total Meter admissions by decision (allowed, refused, degraded, error) and, for refusals, the refusing limit (per_second, per_minute, per_hour, day, month, rate).
# TYPE restmcp_meter_decisions_total counter
restmcp_meter_decisions_total{decision="allowed",reason=""} 3
restmcp_meter_decisions_total{decision="refused",reason="per_second"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), MetricToolCalls, MetricMeterDecisions); err != nil {
		t.Error(err)
	}
	for _, s := range []string{
		`restmcp_meter_duration_seconds_count{op="admit"} 4`,
		`restmcp_meter_duration_seconds_count{op="event"} 5`,
		`restmcp_usage_events_total{result="written"} 5`,
		`restmcp_upstream_duration_seconds_count{outcome="ok"} 1`,
		`restmcp_upstream_duration_seconds_count{outcome="upstream_error"} 1`,
	} {
		if !strings.Contains(got.body, s) {
			t.Errorf("/metrics lacks %q", s)
		}
	}
}

// batchMeter is a fakeMeter that also takes events in batches.
type batchMeter struct {
	*fakeMeter
	mu      sync.Mutex
	batches [][]metering.Event
	singles int
}

func (m *batchMeter) RecordEvents(_ context.Context, events []metering.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.batches = append(m.batches, append([]metering.Event(nil), events...))
	return nil
}

func (m *batchMeter) RecordEvent(ctx context.Context, e metering.Event) error {
	m.mu.Lock()
	m.singles++
	m.mu.Unlock()
	return m.fakeMeter.RecordEvent(ctx, e)
}

// TestUsageEventsBatched: with a Meter that takes batches, usage events
// go through one writer, none is lost, and Close waits for the queue.
func TestUsageEventsBatched(t *testing.T) {
	up := newPlanUpstream(t)
	meter := &batchMeter{fakeMeter: &fakeMeter{admit: allowedDecision}}
	s, err := New(Options{Tools: loadTools(t, "testdata/plans_api.yaml", up.URL), Keys: planKeys(), Meter: meter})
	if err != nil {
		t.Fatal(err)
	}
	srv := serveHandler(t, s)
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			post(t, srv.URL+"/mcp", toolsCallBody(i, "get_quote", `{"symbol":"AAPL"}`), map[string]string{"X-API-Key": "k-free"})
		})
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	meter.mu.Lock()
	defer meter.mu.Unlock()
	n := 0
	for _, b := range meter.batches {
		for _, e := range b {
			if e.Tool != "get_quote" || e.Outcome != metering.OutcomeOK || e.Plan != "free" || e.Cost != 1 || e.KeyID != metering.KeyID("k-free") {
				t.Errorf("event %+v", e)
			}
		}
		n += len(b)
	}
	if n != 40 || meter.singles != 0 {
		t.Errorf("%d events in %d batches and %d one by one; want 40 in batches", n, len(meter.batches), meter.singles)
	}
}

// TestAccessLogToolsCall: the access-log line of a tools/call says how it
// ended: outcome, upstream status, is_error, the meter's decision, the
// units charged and the time spent in the meter and upstream (beside the
// total duration_ms).
func TestAccessLogToolsCall(t *testing.T) {
	up := newPlanUpstream(t)
	logs := &logBuffer{}
	refuse := false
	meter := &fakeMeter{admit: func(c metering.Call) (metering.Decision, error) {
		if refuse {
			return metering.Decision{Limit: 30, RetryAfter: time.Second, Policy: "per_minute", RefusedBy: "per_minute", Window: time.Minute}, nil
		}
		return allowedDecision(c)
	}}
	srv, s := serveServer(t, Options{Tools: loadTools(t, "testdata/plans_api.yaml", up.URL), Keys: planKeys(), Meter: meter, Logger: newLogger(logs)})
	key := map[string]string{"X-API-Key": "k-free"}
	post(t, srv.URL+"/mcp", toolsCallBody(1, "get_quote", `{"symbol":"AAPL"}`), key)
	post(t, srv.URL+"/mcp", toolsCallBody(2, "always_fails", `{}`), key)
	post(t, srv.URL+"/mcp", toolsCallBody(3, "admin_stats", `{}`), key)
	post(t, srv.URL+"/mcp", toolsCallBody(4, "get_quote", `{}`), key)
	refuse = true
	post(t, srv.URL+"/mcp", toolsCallBody(5, "get_quote", `{"symbol":"AAPL"}`), key)
	meter.settledEvents(t, s, 5)

	var got []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec["msg"] != "http request" {
			continue
		}
		// The times vary: each must be a number of milliseconds, at least 0.
		for _, k := range []string{"duration_ms", "meter_ms", "upstream_ms"} {
			if v, ok := rec[k].(float64); !ok || v < 0 {
				t.Errorf("%s = %v, want a number of milliseconds", k, rec[k])
			}
			rec[k] = 0.0
		}
		if id, _ := rec["request_id"].(string); len(id) != 16 {
			t.Errorf("request_id = %q, want 16 hex digits", id)
		}
		delete(rec, "time")
		rec["request_id"] = "R"
		got = append(got, rec)
	}
	base := func(id int, tool, outcome string, status int, isError bool, decision string, cost int, httpStatus int) map[string]any {
		return map[string]any{"level": "INFO", "msg": "http request", "method": "POST", "path": "/mcp", "status": float64(httpStatus),
			"duration_ms": 0.0, "request_id": "R", "key_id": metering.KeyID("k-free"), "key_source": "header", "rpc_method": "tools/call",
			"tool": tool, "outcome": outcome, "upstream_status": float64(status), "is_error": isError, "meter": decision,
			"cost": float64(cost), "meter_ms": 0.0, "upstream_ms": 0.0}
	}
	want := []map[string]any{
		base(1, "get_quote", "ok", 200, false, "allowed", 1, 200),
		base(2, "always_fails", "upstream_error", 500, true, "allowed", 1, 200),
		base(3, "admin_stats", "not_in_plan", 0, true, "", 0, 200),
		base(4, "get_quote", "invalid_arguments", 0, true, "allowed", 1, 200),
		base(5, "get_quote", "refused", 0, false, "refused", 0, 429),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("access-log lines (-want +got):\n%s", diff)
	}
}

// TestQuotaRefusalNamesTheUpgrade: a quota refusal names the plan's
// upgrade URL when it has one (waiting for the next day or month is rarely
// the answer); a rate-limit refusal, which ends within its window, does not.
func TestQuotaRefusalNamesTheUpgrade(t *testing.T) {
	plan := &metering.Plan{Name: "free", UpgradeURL: "https://example.com/pricing"}
	for _, c := range []struct {
		plan *metering.Plan
		d    metering.Decision
		want string
	}{
		{plan, metering.Decision{RefusedBy: "day", Limit: 100},
			`quota exceeded: the day quota of plan "free" is 100 units; retry after 3600 seconds, when the next day starts (UTC), or upgrade: https://example.com/pricing`},
		{&metering.Plan{Name: "pro"}, metering.Decision{RefusedBy: "month", Limit: 5},
			`quota exceeded: the month quota of plan "pro" is 5 units; retry after 3600 seconds, when the next month starts (UTC)`},
		{plan, metering.Decision{RefusedBy: "per_minute", Limit: 10, Window: time.Minute},
			`rate limit exceeded: 10 calls per minute of plan "free"; retry after 3600 seconds`},
	} {
		if got := refusalMessage(c.plan, c.d, 3600); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}
