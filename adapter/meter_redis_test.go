package adapter_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/restmcp/restmcp/adapter"
	"github.com/restmcp/restmcp/metering"
	"github.com/restmcp/restmcp/openapi"
)

// meterShim adapts a metering.Meter to adapter.Meter, the way cmd does.
type meterShim struct{ m metering.Meter }

func (s meterShim) Admit(ctx context.Context, keyID string) (adapter.Admission, error) {
	d, err := s.m.Admit(ctx, keyID)
	if err != nil {
		return adapter.Admission{}, err
	}
	return adapter.Admission{Allowed: d.Allowed, Limit: d.Limit, Remaining: d.Remaining, Reset: d.Reset, RetryAfter: d.RetryAfter}, nil
}

// redisClient connects to the test Redis (RESTMCP_TEST_REDIS_URL, default
// redis://127.0.0.1:6379/15). Unreachable: a loud skip, or a failure when
// RESTMCP_REQUIRE_REDIS=1.
func redisClient(t *testing.T) *redis.Client {
	t.Helper()
	url := os.Getenv("RESTMCP_TEST_REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/15"
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("RESTMCP_TEST_REDIS_URL=%q: %v", url, err)
	}
	opt.PoolSize = 64
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		msg := fmt.Sprintf("\n*** REDIS UNREACHABLE at %s: %v\n*** The adapter-with-Redis-meter test did NOT run. Start redis-server, or set RESTMCP_REQUIRE_REDIS=1 to make this a failure.", url, err)
		if os.Getenv("RESTMCP_REQUIRE_REDIS") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return c
}

// TestRedisMeterConcurrentToolsCalls: 200 concurrent tools/call for one key
// with a limit of 100 → exactly 100 answered 200 (and sent upstream), 100
// answered 429, and the key's counter is 100.
func TestRedisMeterConcurrentToolsCalls(t *testing.T) {
	rdb := redisClient(t)
	meter := metering.NewRedis(rdb, metering.Options{Limit: 100, Window: time.Hour})

	var upstreamCalls atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstreamCalls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"pong":true}`)
	}))
	defer up.Close()
	doc, err := openapi.Load(context.Background(), "testdata/c26.yaml", openapi.LoadOptions{Upstream: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := adapter.New(adapter.Options{Tools: doc.Tools, Meter: meterShim{meter}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	// A key of its own, so runs and packages sharing the database never meet.
	var b [8]byte
	_, _ = rand.Read(b[:])
	key := "k-redis-" + hex.EncodeToString(b[:])

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
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ping","arguments":{}}}`, i+1)
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
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

	if want := map[int]int{200: 100, 429: 100}; fmt.Sprint(statuses) != fmt.Sprint(want) {
		t.Errorf("statuses = %v, want %v", statuses, want)
	}
	if got := upstreamCalls.Load(); got != 100 {
		t.Errorf("upstream calls = %d, want 100", got)
	}
	usage, err := meter.Usage(context.Background(), adapter.KeyID(key))
	if err != nil {
		t.Fatal(err)
	}
	if usage != 100 {
		t.Errorf("usage counter = %d, want 100", usage)
	}
}
