package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"github.com/restmcp/restmcp/adapter"
	"github.com/restmcp/restmcp/config"
	"github.com/restmcp/restmcp/internal/testenv"
	"github.com/restmcp/restmcp/metering"
	"github.com/restmcp/restmcp/openapi"
)

func TestMain(m *testing.M) {
	if os.Getenv(adapter.JQWorkerEnv) == "1" {
		// A jq worker serve started from its own executable, which is
		// this test binary.
		os.Exit(adapter.ServeJQWorker(os.Stdin, os.Stdout, os.Stderr))
	}
	// newServer is called directly here, without run's gin.SetMode.
	gin.SetMode(gin.TestMode)
	testenv.Main(m)
}

// testRedisURL is testenv.RedisURL.
func testRedisURL(t testing.TB) string { t.Helper(); return testenv.RedisURL(t) }

// withQuery appends query parameters to a Redis URL.
func withQuery(u, q string) string {
	if strings.Contains(u, "?") {
		return u + "&" + q
	}
	return u + "?" + q
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// recUpstream answers /fail with 500 and everything else 200, recording
// the paths it saw.
type recUpstream struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
	keys  []string // the X-Api-Key of each request, beside paths
}

func newRecUpstream(t testing.TB) *recUpstream {
	u := &recUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.paths = append(u.paths, r.URL.Path)
		u.keys = append(u.keys, r.Header.Get("X-Api-Key"))
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

func (u *recUpstream) take() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	p := u.paths
	u.paths, u.keys = nil, nil
	return p
}

// takeKeys returns and forgets the X-Api-Key of each request (and its
// path).
func (u *recUpstream) takeKeys() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	k := u.keys
	u.paths, u.keys = nil, nil
	return k
}

// testApp is restmcp wired by newServer, as runServe wires it, behind an
// httptest server.
type testApp struct {
	url string
	mw  *meteringWiring
	up  *recUpstream
	srv *adapter.Server
}

// startApp writes plansYAML (if not empty) to a file and serves
// testdata/plans_api.yaml with env on top of it.
func startApp(t testing.TB, plansYAML string, env map[string]string) *testApp {
	t.Helper()
	up := newRecUpstream(t)
	e := map[string]string{
		"RESTMCP_SPEC":     "testdata/plans_api.yaml",
		"RESTMCP_UPSTREAM": up.URL,
	}
	if plansYAML != "" {
		path := filepath.Join(t.TempDir(), "plans.yaml")
		if err := os.WriteFile(path, []byte(plansYAML), 0o600); err != nil {
			t.Fatal(err)
		}
		e["RESTMCP_PLANS_FILE"] = path
	}
	for k, v := range env {
		e[k] = v
	}
	cfg, err := config.Load(nil, func(k string) string { return e[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	doc, err := openapi.Load(ctx, cfg.Spec, openapi.LoadOptions{Upstream: cfg.Upstream})
	if err != nil {
		t.Fatal(err)
	}
	url, srv, mw := serveWired(t, cfg, doc, logger, nil)
	return &testApp{url: url, mw: mw, up: up, srv: srv}
}

// serveWired serves doc wired by newServer, as runServe wires it (tp:
// tracing, nil for none), on a loopback listener opened first (the OAuth
// issuer names its port), and closes it all when the test ends.
func serveWired(t testing.TB, cfg config.Config, doc *openapi.Document, logger *slog.Logger, tp trace.TracerProvider) (string, *adapter.Server, *meteringWiring) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, mw, err := newServer(context.Background(), cfg, doc, logger, ln.Addr().String(), tp)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(srv.Handler())
	hs.Listener.Close()
	hs.Listener = ln
	hs.Start()
	t.Cleanup(func() {
		hs.Close()
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Close(cctx); err != nil {
			t.Error(err)
		}
		mw.close(cctx)
	})
	return hs.URL, srv, mw
}

// createKey creates a registry key on plan and removes it from Redis when
// the test ends.
func (a *testApp) createKey(t testing.TB, redisURL, plan string) (string, string) {
	t.Helper()
	key, rec, err := a.mw.registry.Create(context.Background(), plan, "test")
	if err != nil {
		t.Fatal(err)
	}
	cleanupKeyRecord(t, redisURL, rec.KeyID)
	return key, rec.KeyID
}

func cleanupKeyRecord(t testing.TB, redisURL, keyID string) {
	t.Cleanup(func() {
		opt, _ := redis.ParseURL(redisURL)
		c := redis.NewClient(opt)
		defer c.Close()
		ctx := context.Background()
		c.Del(ctx, metering.Key(keyID, "key"))
		c.SRem(ctx, metering.DefaultIndexKey, keyID)
	})
}

// report reads keyID's usage under plan through the wired meter.
func (a *testApp) report(t *testing.T, keyID, plan string) metering.Report {
	t.Helper()
	p := a.mw.plans.Plan(plan)
	r, err := a.mw.meter.Report(context.Background(), keyID, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// awaitDayUsed waits, up to 10 s, until keyID's day period under plan shows
// want units used (refunds land after the response that caused them); it
// fails the test with the last count seen when they never do.
func (a *testApp) awaitDayUsed(t *testing.T, keyID, plan string, want int64) {
	t.Helper()
	if err := testenv.Poll(10*time.Second, func() error {
		if used := a.report(t, keyID, plan).Periods[0].Used; used != want {
			return fmt.Errorf("day used %d, want %d", used, want)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

type httpResult struct {
	status int
	header http.Header
	body   string
}

func postMCP(t *testing.T, url, key, body string) httpResult {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	return doHTTP(t, req)
}

func doHTTP(t *testing.T, req *http.Request) httpResult {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return httpResult{resp.StatusCode, resp.Header, string(b)}
}

func callBody(id int, tool, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
}

func toolUsage(r metering.Report) map[string]metering.ToolUsage {
	return r.Periods[1].Tools
}

const gatePlans = `
default_plan: free
key_mode: registry
counting: admitted
plans:
  free:
    rate_limits: {per_minute: 1000}
    quotas: {day: 100}
    tools: ["tag:public"]
    upgrade: {message: "Pro includes ETF and admin tools", url: "https://example.com/pricing"}
  pro:
    rate_limits: {per_second: 100}
    quotas: {month: 10000}
`

// connect opens a go-sdk client session to app, with key in the x-api-key
// header ("" for none).
func connect(t *testing.T, ctx context.Context, url, key string) *mcp.ClientSession {
	t.Helper()
	hc := http.DefaultClient
	if key != "" {
		hc = &http.Client{Transport: keyTransport{key: key}}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "restmcp-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func toolNames(t *testing.T, ctx context.Context, cs *mcp.ClientSession) []string {
	t.Helper()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	sort.Strings(names)
	return names
}

// TestPlanGateThroughMCPClient drives the plan gate and list_by_plan with
// the go-sdk client: a tool outside the plan is an isError result naming
// tool, plan and upgrade path, not counted and not sent upstream; tools/list
// shows the plan's tools to a key and every tool without one.
func TestPlanGateThroughMCPClient(t *testing.T) {
	redisURL := testRedisURL(t)
	app := startApp(t, gatePlans, map[string]string{"RESTMCP_REDIS_URL": redisURL, "RESTMCP_LIST_BY_PLAN": "true"})
	key, keyID := app.createKey(t, redisURL, "free")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	cs := connect(t, ctx, app.url, key)
	if diff := cmp.Diff([]string{"always_fails", "get_quote"}, toolNames(t, ctx, cs)); diff != "" {
		t.Errorf("tools/list for a free key (-want +got):\n%s", diff)
	}
	anon := connect(t, ctx, app.url, "")
	if diff := cmp.Diff([]string{"admin_stats", "always_fails", "etfs_top_holdings", "get_quote"}, toolNames(t, ctx, anon)); diff != "" {
		t.Errorf("tools/list without a key (-want +got):\n%s", diff)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "etfs_top_holdings", Arguments: map[string]any{"symbol": "SPY"}})
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	want := `tool "etfs_top_holdings" is not included in plan "free". Pro includes ETF and admin tools. Upgrade: https://example.com/pricing`
	if !res.IsError || text(res) != want {
		t.Errorf("tool outside the plan: isError=%v %q, want isError %q", res.IsError, text(res), want)
	}
	if p := app.up.take(); len(p) != 0 {
		t.Errorf("upstream saw %v for a tool outside the plan, want nothing", p)
	}
	r := app.report(t, keyID, "free")
	if r.Periods[0].Used != 0 || len(toolUsage(r)) != 0 {
		t.Errorf("after a refused tool: day used %d, tools %v; want 0 and none", r.Periods[0].Used, toolUsage(r))
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_quote", Arguments: map[string]any{"symbol": "AAPL"}})
	if err != nil || res.IsError {
		t.Fatalf("get_quote: %v %v %s", err, res != nil && res.IsError, text(res))
	}
	if p := app.up.take(); !cmp.Equal(p, []string{"/quotes/AAPL"}) {
		t.Errorf("upstream saw %v, want [/quotes/AAPL]", p)
	}
	r = app.report(t, keyID, "free")
	if diff := cmp.Diff(map[string]metering.ToolUsage{"get_quote": {Calls: 1, Cost: 1}}, toolUsage(r)); r.Periods[0].Used != 1 || diff != "" {
		t.Errorf("day used %d (want 1); tools (-want +got):\n%s", r.Periods[0].Used, diff)
	}
}

// TestRegistryModeKeys: unknown and revoked keys get 401 with the exact
// JSON-RPC error; a registry key works until revoked.
func TestRegistryModeKeys(t *testing.T) {
	redisURL := testRedisURL(t)
	app := startApp(t, gatePlans, map[string]string{"RESTMCP_REDIS_URL": redisURL})
	unknown := "rmk_unknown_" + randomHex(8)
	got := postMCP(t, app.url, unknown, callBody(1, "get_quote", `{"symbol":"AAPL"}`))
	want := `{"jsonrpc":"2.0","id":1,"error":{"code":-31401,"message":"unknown API key (key_id ` + metering.KeyID(unknown) + `): this server does not know the key; check it, or ask the API provider for a key, and send it in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>"}}`
	if got.status != 401 || got.body != want || got.header.Get("WWW-Authenticate") == "" {
		t.Errorf("unknown key: %d %q %s\nwant 401 %s", got.status, got.header.Get("WWW-Authenticate"), got.body, want)
	}

	key, keyID := app.createKey(t, redisURL, "pro")
	if got := postMCP(t, app.url, key, callBody(2, "admin_stats", `{}`)); got.status != 200 || strings.Contains(got.body, `"isError":true`) {
		t.Errorf("registry key on pro: %d %s, want 200 without isError", got.status, got.body)
	}
	if _, err := app.mw.registry.Revoke(context.Background(), keyID); err != nil {
		t.Fatal(err)
	}
	got = postMCP(t, app.url, key, callBody(3, "admin_stats", `{}`))
	want = `{"jsonrpc":"2.0","id":3,"error":{"code":-31401,"message":"API key revoked (key_id ` + keyID + `): this key no longer works; ask the API provider for a new key and send it in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>"}}`
	if got.status != 401 || got.body != want {
		t.Errorf("revoked key: %d %s\nwant 401 %s", got.status, got.body, want)
	}
}

// TestOpenModeAcceptsAnyKey: key_mode open meters any key under the
// default plan.
func TestOpenModeAcceptsAnyKey(t *testing.T) {
	redisURL := testRedisURL(t)
	app := startApp(t, strings.Replace(gatePlans, "key_mode: registry", "key_mode: open", 1), map[string]string{"RESTMCP_REDIS_URL": redisURL})
	key := "any-key-" + randomHex(8)
	got := postMCP(t, app.url, key, callBody(1, "get_quote", `{"symbol":"AAPL"}`))
	if got.status != 200 || got.header.Get("RateLimit-Limit") != "100" || got.header.Get("RateLimit-Remaining") != "99" {
		t.Errorf("open mode: %d RateLimit-Limit %q Remaining %q %s; want 200, 100, 99 (the free day quota)",
			got.status, got.header.Get("RateLimit-Limit"), got.header.Get("RateLimit-Remaining"), got.body)
	}
	if g, w := got.header.Get("RateLimit-Policy"), `100;w=86400;policy="day"`; g != w {
		t.Errorf("RateLimit-Policy = %q, want %q", g, w)
	}
	got = postMCP(t, app.url, key, callBody(2, "admin_stats", `{}`))
	if !strings.Contains(got.body, `not included in plan \"free\"`) {
		t.Errorf("open key on the default plan calling admin_stats: %s", got.body)
	}
	if r := app.report(t, metering.KeyID(key), "free"); r.Periods[0].Used != 1 {
		t.Errorf("day used = %d, want 1", r.Periods[0].Used)
	}
}

// TestSuccessCountingRefunds: with counting success, calls whose upstream
// answered 500 are refunded; 200s stay counted.
func TestSuccessCountingRefunds(t *testing.T) {
	redisURL := testRedisURL(t)
	plans := strings.Replace(gatePlans, "counting: admitted", "counting: success", 1)
	app := startApp(t, plans, map[string]string{"RESTMCP_REDIS_URL": redisURL})
	key, keyID := app.createKey(t, redisURL, "free")
	for i := range 3 {
		if got := postMCP(t, app.url, key, callBody(i, "always_fails", `{}`)); !strings.Contains(got.body, "HTTP 500") {
			t.Fatalf("always_fails: %s", got.body)
		}
	}
	for i := range 2 {
		postMCP(t, app.url, key, callBody(10+i, "get_quote", `{"symbol":"AAPL"}`))
	}
	// Refunds and usage events are written after the response: Close waits
	// for every one.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := app.srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	r := app.report(t, keyID, "free")
	want := map[string]metering.ToolUsage{"always_fails": {Calls: 0, Cost: 0}, "get_quote": {Calls: 2, Cost: 2}}
	if diff := cmp.Diff(want, toolUsage(r)); r.Periods[0].Used != 2 || r.Periods[1].Used != 2 || diff != "" {
		t.Errorf("day used %d, month used %d (want 2, 2); tools (-want +got):\n%s", r.Periods[0].Used, r.Periods[1].Used, diff)
	}
}

// TestUsageEndpointExact: GET /usage after three calls (cost 1, 1, 5) on a
// plan with quotas only, compared field for field; times follow from the
// report's own "time" (Redis TIME).
func TestUsageEndpointExact(t *testing.T) {
	redisURL := testRedisURL(t)
	plans := gatePlans + `
  quota_only:
    quotas: {day: 50, month: 1000}
`
	app := startApp(t, plans, map[string]string{"RESTMCP_REDIS_URL": redisURL})
	key, keyID := app.createKey(t, redisURL, "quota_only")
	postMCP(t, app.url, key, callBody(1, "get_quote", `{"symbol":"A"}`))
	postMCP(t, app.url, key, callBody(2, "get_quote", `{"symbol":"B"}`))
	postMCP(t, app.url, key, callBody(3, "etfs_top_holdings", `{"symbol":"SPY"}`))

	req, _ := http.NewRequest(http.MethodGet, app.url+"/usage?api_key="+key, nil)
	got := doHTTP(t, req)
	if got.status != 200 {
		t.Fatalf("GET /usage = %d %s", got.status, got.body)
	}
	var head struct {
		Time time.Time `json:"time"`
	}
	if err := json.Unmarshal([]byte(got.body), &head); err != nil {
		t.Fatal(err)
	}
	now := head.Time.UTC()
	if d := time.Since(now); d < -5*time.Second || d > 5*time.Second {
		t.Errorf("report time %v is %v away from this clock", now, d)
	}
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	ts := func(t time.Time) string { return t.Format(time.RFC3339Nano) }
	want := fmt.Sprintf(`{"key_id":%q,"plan":"quota_only","time":%q,"rate_limits":[],"periods":[`+
		`{"period":"day","name":%q,"start":%q,"reset":%q,"used":7,"limit":50,"remaining":43},`+
		`{"period":"month","name":%q,"start":%q,"reset":%q,"used":7,"limit":1000,"remaining":993,`+
		`"tools":{"etfs_top_holdings":{"calls":1,"cost":5},"get_quote":{"calls":2,"cost":2}}}]}`,
		keyID, ts(head.Time), day.Format("20060102"), ts(day), ts(day.AddDate(0, 0, 1)),
		month.Format("200601"), ts(month), ts(month.AddDate(0, 1, 0)))
	if got.body != want {
		t.Errorf("GET /usage:\n got %s\nwant %s", got.body, want)
	}
}

// TestMetricsAfterSmallRun checks exact counts on GET /metrics through the
// real wiring (Redis meter under the outage policy).
func TestMetricsAfterSmallRun(t *testing.T) {
	redisURL := testRedisURL(t)
	app := startApp(t, gatePlans, map[string]string{"RESTMCP_REDIS_URL": redisURL})
	key, _ := app.createKey(t, redisURL, "free")
	postMCP(t, app.url, key, callBody(1, "get_quote", `{"symbol":"A"}`))
	postMCP(t, app.url, key, callBody(2, "get_quote", `{"symbol":"B"}`))
	postMCP(t, app.url, key, callBody(3, "always_fails", `{}`))
	postMCP(t, app.url, key, callBody(4, "admin_stats", `{}`))
	postMCP(t, app.url, "rmk_nobody_"+randomHex(6), callBody(5, "get_quote", `{"symbol":"C"}`))

	// Usage events are written after the response, in batches: Close waits
	// for every one, so the counts below are final.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := app.srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, app.url+"/metrics", nil)
	got := doHTTP(t, req)
	for _, line := range []string{
		`restmcp_tool_calls_total{outcome="ok",tool="get_quote"} 2`,
		`restmcp_tool_calls_total{outcome="upstream_error",tool="always_fails"} 1`,
		`restmcp_tool_calls_total{outcome="not_in_plan",tool="admin_stats"} 1`,
		`restmcp_tool_calls_total{outcome="unauthorized",tool="get_quote"} 1`,
		`restmcp_meter_decisions_total{decision="allowed",reason=""} 3`,
		`restmcp_meter_duration_seconds_count{op="admit"} 3`,
		`restmcp_usage_events_total{result="written"} 4`,
		`restmcp_upstream_duration_seconds_count{outcome="ok"} 2`,
		`restmcp_upstream_duration_seconds_count{outcome="upstream_error"} 1`,
		`restmcp_meter_outage_down 0`,
		`restmcp_meter_outage_degraded_total 0`,
		`go_goroutines `,
	} {
		if !strings.Contains(got.body, line) {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	if strings.Contains(got.body, "restmcp_meter_errors_total{") {
		t.Errorf("/metrics reports meter errors with Redis up")
	}
}

// TestOutagePolicy points restmcp at a closed port: fail_closed answers 503
// with Retry-After at once; fail_open serves, without rate-limit headers.
// The key is a static key of the plans file, resolved without Redis.
func TestOutagePolicy(t *testing.T) {
	staticKey := "static-" + randomHex(8)
	plans := func(policy string) string {
		return strings.Replace(gatePlans, "counting: admitted", "counting: admitted\noutage: "+policy, 1) +
			"keys:\n  - key: " + staticKey + "\n    plan: pro\n"
	}
	down := fmt.Sprintf("redis://127.0.0.1:%d/0", closedPort(t))

	t.Run("fail_closed", func(t *testing.T) {
		app := startApp(t, plans("fail_closed"), map[string]string{"RESTMCP_REDIS_URL": down})
		start := time.Now()
		got := postMCP(t, app.url, staticKey, callBody(1, "get_quote", `{"symbol":"A"}`))
		elapsed := time.Since(start)
		want := `{"jsonrpc":"2.0","id":1,"error":{"code":-31503,"message":"usage metering is temporarily unavailable; retry in 5 seconds"}}`
		if got.status != 503 || got.header.Get("Retry-After") != "5" || got.body != want {
			t.Errorf("got %d Retry-After %q %s\nwant 503 5 %s", got.status, got.header.Get("Retry-After"), got.body, want)
		}
		if elapsed > 2*time.Second {
			t.Errorf("503 took %v; a down Redis must fail fast", elapsed)
		}
		if p := app.up.take(); len(p) != 0 {
			t.Errorf("upstream saw %v", p)
		}
		t.Logf("fail_closed 503 in %v", elapsed)
	})
	t.Run("fail_open", func(t *testing.T) {
		app := startApp(t, plans("fail_open"), map[string]string{"RESTMCP_REDIS_URL": down})
		for i := range 3 {
			got := postMCP(t, app.url, staticKey, callBody(i, "get_quote", `{"symbol":"A"}`))
			if got.status != 200 || strings.Contains(got.body, `"isError":true`) || got.header.Get("RateLimit-Limit") != "" {
				t.Errorf("fail_open call %d: %d RateLimit-Limit %q %s; want 200, no headers", i, got.status, got.header.Get("RateLimit-Limit"), got.body)
			}
		}
		if p := app.up.take(); len(p) != 3 {
			t.Errorf("upstream saw %d calls, want 3", len(p))
		}
		req, _ := http.NewRequest(http.MethodGet, app.url+"/metrics", nil)
		body := doHTTP(t, req).body
		for _, line := range []string{"restmcp_meter_outage_down 1", "restmcp_meter_outage_degraded_total 3", "restmcp_meter_outage_buffered 3",
			`restmcp_meter_decisions_total{decision="degraded",reason=""} 3`} {
			if !strings.Contains(body, line) {
				t.Errorf("/metrics lacks %q", line)
			}
		}
	})
}

// TestIssue4NoPlansFileConcurrent is the core's behaviour without a plans
// file: one plan from rate_limit, key mode open. 200 concurrent tools/call
// for one key with a limit of 100 → exactly 100 answered 200 (and sent
// upstream), 100 answered 429, and the key's month counter is 100.
func TestIssue4NoPlansFileConcurrent(t *testing.T) {
	// 200 simultaneous admissions open up to a pool's worth of new Redis
	// connections at once; under -race on a busy 2-core machine that can
	// outlast the production timeouts (1 s dial, 2 s meter) and turn a 429
	// into a 503. This test is about counting, so it gives metering time.
	redisURL := withQuery(testRedisURL(t), "dial_timeout=10s&read_timeout=10s&pool_timeout=20s")
	app := startApp(t, "", map[string]string{
		"RESTMCP_REDIS_URL": redisURL, "RESTMCP_RATE_LIMIT": "100", "RESTMCP_RATE_WINDOW": "1h",
		"RESTMCP_METER_TIMEOUT": "30s",
	})
	key := "k-redis-" + randomHex(8)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200}}
	const n = 200
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		statuses = map[int]int{}
	)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			req, _ := http.NewRequest(http.MethodPost, app.url+"/mcp", strings.NewReader(callBody(i+1, "get_quote", `{"symbol":"A"}`)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("X-API-Key", key)
			resp, err := client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			statuses[resp.StatusCode]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	if want := map[int]int{200: 100, 429: 100}; !cmp.Equal(statuses, want) {
		t.Errorf("statuses = %v, want %v", statuses, want)
	}
	if got := len(app.up.take()); got != 100 {
		t.Errorf("upstream calls = %d, want 100", got)
	}
	if r := app.report(t, metering.KeyID(key), "default"); r.Periods[1].Used != 100 {
		t.Errorf("month used = %d, want 100", r.Periods[1].Used)
	}
}

// TestKeysCommands runs keys create, list, show, revoke and usage
// in-process against the real Redis.
func TestKeysCommands(t *testing.T) {
	redisURL := testRedisURL(t)
	path := filepath.Join(t.TempDir(), "plans.yaml")
	if err := os.WriteFile(path, []byte(gatePlans), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"RESTMCP_REDIS_URL": redisURL, "RESTMCP_PLANS_FILE": path}
	getenv := func(k string) string { return env[k] }
	runCmd := func(args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		err := run(context.Background(), args, getenv, &out, &errOut)
		return out.String(), errOut.String(), err
	}

	out, stderr, err := runCmd("keys", "create", "--plan", "pro", "--label", "acme corp")
	if err != nil {
		t.Fatalf("keys create: %v %s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], metering.KeyTokenPrefix) || len(lines[0]) != 52 {
		t.Fatalf("keys create printed %q, want the key then its id", out)
	}
	key, keyID := lines[0], lines[1]
	cleanupKeyRecord(t, redisURL, keyID)
	if keyID != metering.KeyID(key) {
		t.Errorf("key id %q, want %q", keyID, metering.KeyID(key))
	}
	if !strings.Contains(stderr, "shown only now") {
		t.Errorf("stderr %q lacks the show-once note", stderr)
	}

	show := func() metering.KeyRecord {
		out, stderr, err := runCmd("keys", "show", keyID)
		if err != nil {
			t.Fatalf("keys show: %v %s", err, stderr)
		}
		var rec metering.KeyRecord
		if err := json.Unmarshal([]byte(out), &rec); err != nil {
			t.Fatalf("keys show output %q: %v", out, err)
		}
		return rec
	}
	rec := show()
	if rec.KeyID != keyID || rec.Plan != "pro" || rec.Status != metering.KeyActive || rec.Label != "acme corp" || rec.Source != metering.SourceRegistry || rec.Created.IsZero() {
		t.Errorf("keys show = %+v", rec)
	}

	out, _, err = runCmd("keys", "list")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "KEY_ID") || !strings.Contains(out, keyID+"  pro   active  registry") {
		t.Errorf("keys list lacks the key's row:\n%s", out)
	}

	out, _, err = runCmd("usage", keyID)
	if err != nil {
		t.Fatal(err)
	}
	var r metering.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Plan != "pro" || r.KeyID != keyID || r.Periods[1].Limit != 10000 {
		t.Errorf("usage = %+v (%v), want plan pro with month limit 10000", r, err)
	}
	out, _, err = runCmd("usage", keyID, "--plan", "free")
	if err != nil {
		t.Fatalf("usage --plan free: %v", err)
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Plan != "free" {
		t.Errorf("usage --plan free = %s", out)
	}

	if _, stderr, err := runCmd("keys", "revoke", keyID); err != nil {
		t.Fatalf("keys revoke: %v %s", err, stderr)
	}
	if rec := show(); rec.Status != metering.KeyRevoked || rec.Revoked.IsZero() {
		t.Errorf("after revoke: %+v", rec)
	}

	// Errors: an unknown plan, an unknown key id, no Redis.
	if _, _, err := runCmd("keys", "create", "--plan", "gold"); err == nil || !strings.Contains(err.Error(), `unknown plan "gold" (plans: free, pro)`) {
		t.Errorf("create on an unknown plan: %v", err)
	}
	if _, _, err := runCmd("keys", "show", "000000000000"); err == nil || !strings.Contains(err.Error(), "unknown API key") {
		t.Errorf("show of an unknown key id: %v", err)
	}
	delete(env, "RESTMCP_REDIS_URL")
	_, _, err = runCmd("keys", "list")
	if want := "the key registry and usage counters live in Redis: set RESTMCP_REDIS_URL (or redis_url in the config file) to the Redis that restmcp serve uses"; err == nil || err.Error() != want {
		t.Errorf("without Redis: %v, want %q", err, want)
	}
}

// BenchmarkToolsCallMetered is one tools/call end to end (loopback POST,
// gate, go-sdk, loopback upstream) as newServer wires it: the implicit plan
// in memory, the implicit plan in Redis, and a plans file in registry mode
// with a registry key (lookup cached), two rate limits and a day quota.
// Compare with adapter's BenchmarkToolsCall (a no-op meter) for the
// admission overhead.
func BenchmarkToolsCallMetered(b *testing.B) {
	redisURL := testRedisURL(b)
	plans := `
default_plan: std
key_mode: registry
plans:
  std:
    rate_limits: {per_second: 1000000, per_minute: 60000000}
    quotas: {day: 1000000000}
`
	cases := []struct {
		name  string
		plans string
		env   map[string]string
		key   func(a *testApp) string
	}{
		{"memory_implicit_plan", "", map[string]string{"RESTMCP_RATE_LIMIT": "-1"}, nil},
		{"redis_implicit_plan", "", map[string]string{"RESTMCP_REDIS_URL": redisURL, "RESTMCP_RATE_LIMIT": "100000000", "RESTMCP_RATE_WINDOW": "1s"}, nil},
		{"redis_implicit_plan_no_events", "", map[string]string{"RESTMCP_REDIS_URL": redisURL, "RESTMCP_RATE_LIMIT": "100000000", "RESTMCP_RATE_WINDOW": "1s", "RESTMCP_EVENT_MAX_LEN": "-1"}, nil},
		{"redis_plans_registry", plans, map[string]string{"RESTMCP_REDIS_URL": redisURL}, func(a *testApp) string {
			k, _ := a.createKey(b, redisURL, "std")
			return k
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			app := startApp(b, c.plans, c.env)
			key := "bench-" + randomHex(8)
			if c.key != nil {
				key = c.key(app)
			}
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			body := callBody(1, "get_quote", `{"symbol":"A"}`)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				req, _ := http.NewRequest(http.MethodPost, app.url+"/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("X-API-Key", key)
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
				if i%1024 == 0 {
					app.up.take()
				}
			}
			b.StopTimer()
			req, _ := http.NewRequest(http.MethodGet, app.url+"/metrics", nil)
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			metrics, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for _, op := range []string{"admit", "event"} {
				if mean, ok := histogramMean(string(metrics), "restmcp_meter_duration_seconds", op); ok {
					b.ReportMetric(mean*1e6, op+"-µs/op")
				}
			}
		})
	}
}

// histogramMean reads _sum/_count of a histogram series with label op from
// the Prometheus text exposition.
func histogramMean(text, name, op string) (float64, bool) {
	var sum, count float64
	var haveSum, haveCount bool
	for _, line := range strings.Split(text, "\n") {
		var v float64
		switch {
		case strings.HasPrefix(line, name+`_sum{op="`+op+`"} `):
			_, err := fmt.Sscan(strings.Fields(line)[1], &v)
			sum, haveSum = v, err == nil
		case strings.HasPrefix(line, name+`_count{op="`+op+`"} `):
			_, err := fmt.Sscan(strings.Fields(line)[1], &v)
			count, haveCount = v, err == nil
		}
	}
	if !haveSum || !haveCount || count == 0 {
		return 0, false
	}
	return sum / count, true
}

// TestKeyOnAPlanTheServerLacks: restmcp keys takes serve's --plans-file, so
// a key is created on the plan the operator names from the server's own
// plans; a key the registry holds on a plan the serving plans file does not
// define is refused with 403 naming the plan (not a retryable 503).
func TestKeyOnAPlanTheServerLacks(t *testing.T) {
	redisURL := testRedisURL(t)
	path := filepath.Join(t.TempDir(), "plans.yaml")
	if err := os.WriteFile(path, []byte(gatePlans), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	getenv := func(k string) string { return map[string]string{"RESTMCP_REDIS_URL": redisURL}[k] }
	if err := run(context.Background(), []string{"keys", "create", "--plans-file", path, "--plan", "pro"}, getenv, &out, &errOut); err != nil {
		t.Fatalf("keys create --plans-file: %v %s", err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("keys create printed %q, want the key then its id", out.String())
	}
	key, keyID := lines[0], lines[1]
	cleanupKeyRecord(t, redisURL, keyID)
	if !strings.Contains(errOut.String(), `on plan "pro"`) {
		t.Errorf("keys create: %q, want the key on plan \"pro\"", errOut.String())
	}

	freeOnly := "default_plan: free\nkey_mode: registry\nplans:\n  free:\n    rate_limits: {per_minute: 1000}\n"
	app := startApp(t, freeOnly, map[string]string{"RESTMCP_REDIS_URL": redisURL})
	got := postMCP(t, app.url, key, callBody(7, "get_quote", `{"symbol":"AAPL"}`))
	want := `{"jsonrpc":"2.0","id":7,"error":{"code":-31401,"message":"API key refused: key_id ` + keyID + ` is on plan \"pro\", which the plans file does not define; ask the API provider to move the key to a plan this server serves"}}`
	if got.status != http.StatusForbidden || got.body != want || got.header.Get("Retry-After") != "" {
		t.Errorf("key on an unknown plan: %d (Retry-After %q) %s\nwant 403 %s", got.status, got.header.Get("Retry-After"), got.body, want)
	}
}
