package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/restmcp/restmcp/config"
	"github.com/restmcp/restmcp/internal/testenv"
	"github.com/restmcp/restmcp/metering"
)

// defaultTestClusterURL is the three-node Redis Cluster .ci/run creates on
// loopback (redis_mode cluster syntax: the first node, then addr= for the
// others).
const defaultTestClusterURL = "redis://127.0.0.1:7001?addr=127.0.0.1:7002&addr=127.0.0.1:7003"

// testClusterURL returns the Redis Cluster to test against
// (RESTMCP_TEST_REDIS_CLUSTER_URL, else the default) once it answers with
// cluster_state:ok. Without one the test is skipped loudly, or fails when
// RESTMCP_REQUIRE_REDIS_CLUSTER=1 (CI sets it).
func testClusterURL(t *testing.T) string {
	t.Helper()
	url := os.Getenv("RESTMCP_TEST_REDIS_CLUSTER_URL")
	if url == "" {
		url = defaultTestClusterURL
	}
	opt, err := redis.ParseClusterURL(url)
	if err != nil {
		t.Fatalf("RESTMCP_TEST_REDIS_CLUSTER_URL=%q: %v", url, err)
	}
	opt.DialTimeout, opt.MaxRetries, opt.DialerRetries = time.Second, -1, 1
	c := redis.NewClusterClient(opt)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	info, err := c.ClusterInfo(ctx).Result()
	if err == nil && !strings.Contains(info, "cluster_state:ok") {
		err = fmt.Errorf("cluster_state is not ok:\n%s", info)
	}
	if err != nil {
		msg := fmt.Sprintf("\n*** REDIS CLUSTER UNREACHABLE at %s: %v\n*** The Redis Cluster tests did NOT run. Create one (see .ci/run), or set RESTMCP_REQUIRE_REDIS_CLUSTER=1 to make this a failure.", url, err)
		testenv.Unavailable(t, "RESTMCP_REQUIRE_REDIS_CLUSTER", "a Redis Cluster", msg)
	}
	return url
}

// clusterPlans: registry keys, a day quota of 3 units, counting success (5xx
// refunded).
const clusterPlans = `
default_plan: free
key_mode: registry
counting: success
plans:
  free:
    rate_limits: {per_minute: 1000}
    quotas: {day: 3}
    tools: ["tag:public"]
`

// TestRedisClusterMetering runs restmcp with redis_mode cluster against a
// real three-node Redis Cluster: a registry key created there is accepted,
// admission and the day quota count exactly (the fourth unit is refused
// with 429), 5xx calls are refunded, the usage events land in the stream,
// and a second replica on the same cluster sees the same counters and the
// key's revocation.
func TestRedisClusterMetering(t *testing.T) {
	url := testClusterURL(t)
	env := map[string]string{"RESTMCP_REDIS_URL": url, "RESTMCP_REDIS_MODE": "cluster"}
	app := startApp(t, clusterPlans, env)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	key, rec, err := app.mw.registry.Create(ctx, "free", "cluster test")
	if err != nil {
		t.Fatal(err)
	}
	keyID := rec.KeyID
	opt, _ := redis.ParseClusterURL(url)
	c := redis.NewClusterClient(opt)
	defer c.Close()
	t.Cleanup(func() {
		for _, k := range []string{"key", "month:" + time.Now().UTC().Format("200601")} {
			c.Del(context.Background(), metering.Key(keyID, k))
		}
		c.SRem(context.Background(), metering.DefaultIndexKey, keyID)
	})

	for i := range 2 {
		if got := postMCP(t, app.url, key, callBody(i, "always_fails", `{}`)); got.status != 200 || !strings.Contains(got.body, "HTTP 500") {
			t.Fatalf("always_fails: %d %s", got.status, got.body)
		}
	}
	// Refunds are written after the response: wait for both to land before
	// the quota is spent, so the fourth get_quote, not the third, is refused.
	app.awaitDayUsed(t, keyID, "free", 0)
	for i := range 3 {
		got := postMCP(t, app.url, key, callBody(10+i, "get_quote", `{"symbol":"AAPL"}`))
		if got.status != 200 || strings.Contains(got.body, `"isError":true`) {
			t.Fatalf("get_quote %d: %d %s", i, got.status, got.body)
		}
	}
	got := postMCP(t, app.url, key, callBody(20, "get_quote", `{"symbol":"AAPL"}`))
	if got.status != 429 || !strings.Contains(got.body, `"code":-31429`) || !strings.Contains(got.body, `day`) {
		t.Errorf("fourth get_quote past the day quota of 3: %d %s, want 429 with -31429 naming the day quota", got.status, got.body)
	}

	// Close waits for the refunds and the usage events.
	if err := app.srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	r := app.report(t, keyID, "free")
	wantTools := map[string]metering.ToolUsage{"always_fails": {Calls: 0, Cost: 0}, "get_quote": {Calls: 3, Cost: 3}}
	if diff := cmp.Diff(wantTools, toolUsage(r)); r.Periods[0].Used != 3 || r.Periods[1].Used != 3 || diff != "" {
		t.Errorf("day used %d, month used %d (want 3, 3); tools (-want +got):\n%s", r.Periods[0].Used, r.Periods[1].Used, diff)
	}

	type event struct{ KeyID, Plan, Tool, Cost, Outcome, Status, Bytes string }
	msgs, err := c.XRange(ctx, metering.DefaultEventStream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var events []event
	for _, m := range msgs {
		if m.Values["key_id"] != keyID {
			continue
		}
		s := func(k string) string { v, _ := m.Values[k].(string); return v }
		events = append(events, event{s("key_id"), s("plan"), s("tool"), s("cost"), s("outcome"), s("upstream_status"), s("bytes")})
	}
	// Events are written after the responses, concurrently: compare them in
	// a fixed order.
	sortEvents := func(l []event) {
		slices.SortFunc(l, func(a, b event) int {
			return strings.Compare(a.Tool+a.Outcome+a.Cost, b.Tool+b.Outcome+b.Cost)
		})
	}
	sortEvents(events)
	wantEvents := []event{
		{keyID, "free", "always_fails", "0", "upstream_error", "500", "16"},
		{keyID, "free", "always_fails", "0", "upstream_error", "500", "16"},
		{keyID, "free", "get_quote", "1", "ok", "200", "11"},
		{keyID, "free", "get_quote", "1", "ok", "200", "11"},
		{keyID, "free", "get_quote", "1", "ok", "200", "11"},
		{keyID, "free", "get_quote", "0", "refused", "0", "0"},
	}
	sortEvents(wantEvents)
	if diff := cmp.Diff(wantEvents, events); diff != "" {
		t.Errorf("usage events in %s (-want +got):\n%s", metering.DefaultEventStream, diff)
	}

	// A second replica on the same cluster shares the counters, and sees the
	// revocation at once (its key cache is empty).
	if _, err := app.mw.registry.Revoke(ctx, keyID); err != nil {
		t.Fatal(err)
	}
	other := startApp(t, clusterPlans, env)
	if r := other.report(t, keyID, "free"); r.Periods[0].Used != 3 {
		t.Errorf("second replica: day used %d, want 3", r.Periods[0].Used)
	}
	got = postMCP(t, other.url, key, callBody(30, "get_quote", `{"symbol":"AAPL"}`))
	want := `{"jsonrpc":"2.0","id":30,"error":{"code":-31401,"message":"API key revoked (key_id ` + keyID + `): this key no longer works; ask the API provider for a new key and send it in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>"}}`
	if got.status != 401 || got.body != want {
		t.Errorf("revoked key on the second replica: %d %s\nwant 401 %s", got.status, got.body, want)
	}
}

// TestNewRedisClientModes checks which go-redis client each redis_mode
// builds from its URL, the nodes it reaches and restmcp's short timeouts,
// and that each parser refuses the other modes' options.
func TestNewRedisClientModes(t *testing.T) {
	tests := []struct {
		mode   config.RedisMode
		url    string
		client string
		want   redisTarget
	}{
		{config.RedisSingle, "redis://:pw@10.0.0.1:6380/3", "*redis.Client", redisTarget{config.RedisSingle, []string{"10.0.0.1:6380"}, 3}},
		{config.RedisCluster, "redis://:pw@10.0.0.1:7001?addr=10.0.0.2:7002&addr=10.0.0.3:7003", "*redis.ClusterClient", redisTarget{config.RedisCluster, []string{"10.0.0.1:7001", "10.0.0.2:7002", "10.0.0.3:7003"}, 0}},
		{config.RedisSentinel, "redis://:pw@10.0.0.1:26379/2?master_name=main&addr=10.0.0.2:26379", "*redis.Client", redisTarget{config.RedisSentinel, []string{"10.0.0.1:26379", "10.0.0.2:26379"}, 2}},
	}
	for _, tt := range tests {
		c, target, err := newRedisClient(tt.mode, config.Secret(tt.url))
		if err != nil {
			t.Errorf("%s %s: %v", tt.mode, tt.url, err)
			continue
		}
		if got := fmt.Sprintf("%T", c); got != tt.client {
			t.Errorf("%s: client %s, want %s", tt.mode, got, tt.client)
		}
		if diff := cmp.Diff(tt.want, target, cmp.AllowUnexported(redisTarget{})); diff != "" {
			t.Errorf("%s: target (-want +got):\n%s", tt.mode, diff)
		}
		var dial, read time.Duration
		var retries int
		switch c := c.(type) {
		case *redis.Client:
			o := c.Options()
			dial, read, retries = o.DialTimeout, o.ReadTimeout, o.MaxRetries
		case *redis.ClusterClient:
			o := c.Options()
			dial, read, retries = o.DialTimeout, o.ReadTimeout, o.MaxRetries
		}
		if dial != time.Second || read != time.Second || retries > 0 { // go-redis turns -1 into 0 for *redis.Client: no retries either way
			t.Errorf("%s: dial %v, read %v, retries %d; want 1s, 1s, none", tt.mode, dial, read, retries)
		}
		if tt.mode != config.RedisSentinel { // its client's dialer first asks the sentinels for the master
		}
		_ = c.Close()
	}
	// rediss: the same dialer still speaks TLS (it checks the server's
	// certificate, which this test server's does not pass).
	c, _, err := newRedisClient(config.RedisSingle, "rediss://127.0.0.1:1/0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tlsServer := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsServer.Close()
	_, err = c.(*redis.Client).Options().Dialer(context.Background(), "tcp", tlsServer.Listener.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "x509: certificate") {
		t.Errorf("rediss dial of a server with another certificate: %v, want a certificate error", err)
	}
	for _, bad := range []struct {
		mode config.RedisMode
		url  string
		want string
	}{
		{config.RedisSingle, "redis://10.0.0.1:7001?addr=10.0.0.2:7002", "RESTMCP_REDIS_URL: redis: unexpected option: addr"},
		{config.RedisCluster, "redis://10.0.0.1:7001?master_name=main", "RESTMCP_REDIS_URL (redis_mode cluster): redis: unexpected option: master_name"},
	} {
		if _, _, err := newRedisClient(bad.mode, config.Secret(bad.url)); err == nil || err.Error() != bad.want {
			t.Errorf("%s %s: error %v, want %q", bad.mode, bad.url, err, bad.want)
		}
	}
}
