package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/restmcp/restmcp/adapter"
	"github.com/restmcp/restmcp/metering"
)

// The decoys of the security report: an extra member that encoding/json
// (case-insensitive) read as the method, the tool name or the params, while
// the go-sdk (case-sensitive) ran the real ones.
const (
	decoyMethod = `{"jsonrpc":"2.0","id":1,"method":"tools/call","Method":"ping","params":{"name":%q,"arguments":{"symbol":"AAPL"}}}`
	decoyName   = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"Name":"get_quote","arguments":{"symbol":"AAPL"}}}`
	decoyParams = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":{"symbol":"AAPL"}},"Params":{"name":"get_quote"}}`
)

func decoy(format, tool string) string { return strings.Replace(format, "%q", `"`+tool+`"`, 1) }

const tinyPlans = gatePlans + `
  tiny:
    quotas: {day: 1}
`

// TestIssue8DecoysThroughWiring sends each decoy through restmcp wired as
// serve wires it, in registry mode with a plans file and the real Redis:
// the key check, the plan gate and the quota apply to the call the SDK
// runs, and no counter moves for a refused call.
func TestIssue8DecoysThroughWiring(t *testing.T) {
	redisURL := testRedisURL(t)
	app := startApp(t, tinyPlans, map[string]string{"RESTMCP_REDIS_URL": redisURL})
	ctx := context.Background()

	unknown := "rmk_unknown_" + randomHex(8)
	revoked, revokedID := app.createKey(t, redisURL, "pro")
	if _, err := app.mw.registry.Revoke(ctx, revokedID); err != nil {
		t.Fatal(err)
	}
	free, freeID := app.createKey(t, redisURL, "free")
	tiny, tinyID := app.createKey(t, redisURL, "tiny")

	const how = `send it in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>`
	unknownBody := `{"jsonrpc":"2.0","id":1,"error":{"code":-31401,"message":"unknown API key (key_id ` + metering.KeyID(unknown) + `): this server does not know the key; check it, or ask the API provider for a key, and ` + how + `"}}`
	revokedBody := `{"jsonrpc":"2.0","id":1,"error":{"code":-31401,"message":"API key revoked (key_id ` + revokedID + `): this key no longer works; ask the API provider for a new key and ` + how + `"}}`
	missingBody := `{"jsonrpc":"2.0","id":1,"error":{"code":-31401,"message":"authentication required: send your API key in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>"}}`
	notInPlan := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"tool \"admin_stats\" is not included in plan \"free\". Pro includes ETF and admin tools. Upgrade: https://example.com/pricing"}],"isError":true}}`

	tests := []struct {
		name, key, body string
		status          int
		want            string
	}{
		{"Method decoy, unknown key", unknown, decoy(decoyMethod, "get_quote"), 401, unknownBody},
		{"Method decoy, revoked key", revoked, decoy(decoyMethod, "get_quote"), 401, revokedBody},
		{"Method decoy, no key", "", decoy(decoyMethod, "get_quote"), 401, missingBody},
		{"Name decoy, unknown key", unknown, decoy(decoyName, "get_quote"), 401, unknownBody},
		{"Params decoy, no key", "", decoy(decoyParams, "get_quote"), 401, missingBody},
		{"Method decoy, free key, pro tool", free, decoy(decoyMethod, "admin_stats"), 200, notInPlan},
		{"Name decoy, free key, pro tool", free, decoy(decoyName, "admin_stats"), 200, notInPlan},
		{"Params decoy, free key, pro tool", free, decoy(decoyParams, "admin_stats"), 200, notInPlan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := postMCP(t, app.url, tt.key, tt.body)
			if got.status != tt.status || got.body != tt.want {
				t.Errorf("%s\n= %d %s\nwant %d %s", tt.body, got.status, got.body, tt.status, tt.want)
			}
		})
	}
	if p := app.up.take(); len(p) != 0 {
		t.Errorf("upstream saw %v, want nothing", p)
	}
	if r := app.report(t, freeID, "free"); r.Periods[0].Used != 0 || r.Periods[1].Used != 0 || len(toolUsage(r)) != 0 {
		t.Errorf("free key after decoys: day %d, month %d, tools %v; want 0, 0, none", r.Periods[0].Used, r.Periods[1].Used, toolUsage(r))
	}

	// Past the quota: the one call of the day is used, then every decoy is 429.
	if got := postMCP(t, app.url, tiny, callBody(1, "get_quote", `{"symbol":"AAPL"}`)); got.status != 200 {
		t.Fatalf("first call on tiny: %d %s", got.status, got.body)
	}
	app.up.take()
	for _, format := range []string{decoyMethod, decoyName, decoyParams} {
		body := decoy(format, "get_quote")
		got := postMCP(t, app.url, tiny, body)
		if got.status != 429 || !strings.Contains(got.body, `"code":-31429,"message":"quota exceeded: the day quota of plan \"tiny\" is 1 units`) {
			t.Errorf("%s past the quota = %d %s, want 429 quota exceeded", body, got.status, got.body)
		}
	}
	if p := app.up.take(); len(p) != 0 {
		t.Errorf("upstream saw %v past the quota, want nothing", p)
	}
	if r := app.report(t, tinyID, "tiny"); r.Periods[0].Used != 1 {
		t.Errorf("tiny key: day used %d, want 1", r.Periods[0].Used)
	}
}

// readAll reads from conn until the server closes it or 10 s pass, and
// reports what arrived and whether the server closed the connection.
func readAll(t *testing.T, conn net.Conn) (string, bool) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(conn)
	if err != nil {
		return string(b), false
	}
	return string(b), true
}

// TestIssue8ServerDeadlines runs restmcp as `restmcp` runs, with short
// deadlines: a client that sends headers and no body is cut off, an idle
// keep-alive connection is closed, oversized headers get 431, and with
// max_connections 2 a third connection is served only once a slot frees.
func TestIssue8ServerDeadlines(t *testing.T) {
	mcpURL := startRun(t, map[string]string{
		"RESTMCP_READ_HEADER_TIMEOUT": "300ms",
		"RESTMCP_READ_TIMEOUT":        "300ms",
		"RESTMCP_IDLE_TIMEOUT":        "300ms",
		"RESTMCP_MAX_HEADER_BYTES":    "4096",
		"RESTMCP_MAX_CONNECTIONS":     "2",
	})
	u, _ := url.Parse(mcpURL)
	dial := func() net.Conn {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}

	t.Run("slow body is cut off", func(t *testing.T) {
		conn := dial()
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"", u.Host)
		got, closed := readAll(t, conn)
		if !closed || !strings.HasPrefix(got, "HTTP/1.1 400 ") || !strings.Contains(got, `"message":"reading request body failed"`) {
			t.Errorf("slow body: closed %v, got %q; want a 400 and the connection closed", closed, got)
		}
	})
	t.Run("idle keep-alive is closed", func(t *testing.T) {
		conn := dial()
		fmt.Fprintf(conn, "GET /health HTTP/1.1\r\nHost: %s\r\n\r\n", u.Host)
		got, closed := readAll(t, conn)
		if !closed || !strings.HasPrefix(got, "HTTP/1.1 200 OK") || !strings.HasSuffix(got, `{"status":"ok"}`) {
			t.Errorf("keep-alive after /health: closed %v, got %q; want 200 and then the connection closed", closed, got)
		}
	})
	t.Run("oversized headers", func(t *testing.T) {
		conn := dial()
		fmt.Fprintf(conn, "GET /health HTTP/1.1\r\nHost: %s\r\nX-Big: %s\r\n\r\n", u.Host, strings.Repeat("a", 8192))
		got, _ := readAll(t, conn)
		if !strings.HasPrefix(got, "HTTP/1.1 431 ") {
			t.Errorf("8 KiB header: got %q, want 431", got)
		}
	})
	t.Run("connection cap", func(t *testing.T) {
		idle1, idle2 := dial(), dial()
		third := dial()
		fmt.Fprintf(third, "GET /health HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", u.Host)
		got, _ := readAll(t, third)
		if !strings.HasPrefix(got, "HTTP/1.1 200 OK") {
			t.Fatalf("third connection: %q, want 200", got)
		}
		// The third was accepted only after the header deadline closed an
		// idle one.
		closed := 0
		for _, c := range []net.Conn{idle1, idle2} {
			_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			if _, err := c.Read(make([]byte, 1)); errors.Is(err, io.EOF) {
				closed++
			}
		}
		if closed == 0 {
			t.Error("the third connection was served while both idle connections held the two slots")
		}
	})
}

const publicPlans = `
default_plan: anon
key_mode: open
counting: admitted
plans:
  anon:
    quotas: {day: 2}
  everyone:
    quotas: {day: 3}
`

// TestIssue8PublicModeThroughWiring: public mode as serve wires it, with
// the real Redis: made-up bearer tokens do not buy a fresh budget, each
// client address (X-Forwarded-For through a trusted proxy) has the default
// plan's quota, public_global_plan limits them together, and the Redis
// counters hold exactly the calls served.
func TestIssue8PublicModeThroughWiring(t *testing.T) {
	redisURL := testRedisURL(t)
	app := startApp(t, publicPlans, map[string]string{"RESTMCP_REDIS_URL": redisURL, "RESTMCP_PUBLIC_MODE": "true",
		"RESTMCP_PUBLIC_GLOBAL_PLAN": "everyone", "RESTMCP_TRUSTED_PROXIES": "127.0.0.1"})
	a, b := "198.51.100."+fmt.Sprint(1+randomByte()), "203.0.113."+fmt.Sprint(1+randomByte())
	ids := []string{adapter.AddressKeyID(a), adapter.AddressKeyID(b), adapter.PublicKeyID}
	for _, id := range ids {
		cleanupUsage(t, redisURL, id)
	}
	var lastBody string
	call := func(ip, bearer string) int {
		req, _ := http.NewRequest(http.MethodPost, app.url+"/mcp", strings.NewReader(callBody(1, "get_quote", `{"symbol":"AAPL"}`)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("X-Forwarded-For", ip)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		r := doHTTP(t, req)
		lastBody = r.body
		return r.status
	}
	got := []int{call(a, ""), call(a, "made-up-1")}
	// The operation needs an API key, and public mode sends none: the
	// made-up bearer token did not reach the upstream as a credential.
	if !strings.Contains(lastBody, `"isError":true`) || !strings.Contains(lastBody, "missing credentials") {
		t.Errorf("call with a made-up bearer token: %s, want a missing-credentials tool error", lastBody)
	}
	got = append(got, call(a, "made-up-2"), call(b, "made-up-3"), call(b, ""))
	if diff := cmp.Diff([]int{200, 200, 429, 200, 429}, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	// Refunds of refused calls are written after the response: Close waits.
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := app.srv.Close(cctx); err != nil {
		t.Fatal(err)
	}
	anon, everyone := app.mw.plans.Plan("anon"), app.mw.plans.Plan("everyone")
	for _, tt := range []struct {
		keyID string
		plan  *metering.Plan
		used  int64
	}{{ids[0], anon, 2}, {ids[1], anon, 1}, {ids[2], everyone, 3}} {
		waitUsed(t, app, tt.keyID, tt.plan, tt.used)
	}
	if p := app.up.take(); len(p) != 0 {
		t.Errorf("upstream saw %v, want nothing (every call lacked the credential the operation needs)", p)
	}
}

func randomByte() int { return int(randomHex(1)[0]) % 200 }

// waitUsed checks keyID's day usage (call it after the server's Close,
// which waits for refunds).
func waitUsed(t *testing.T, app *testApp, keyID string, plan *metering.Plan, used int64) {
	t.Helper()
	if r := app.report(t, keyID, plan.Name); r.Periods[0].Used != used {
		t.Errorf("%s: day used %d, want %d", keyID, r.Periods[0].Used, used)
	}
}

// cleanupUsage deletes keyID's counters before and after the test.
func cleanupUsage(t *testing.T, redisURL, keyID string) {
	opt, _ := redis.ParseURL(redisURL)
	c := redis.NewClient(opt)
	del := func() {
		ctx := context.Background()
		keys, _ := c.Keys(ctx, metering.Key(keyID, "*")).Result()
		if len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	}
	del()
	t.Cleanup(func() { del(); c.Close() })
}
