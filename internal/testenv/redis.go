package testenv

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisURL returns the test Redis (RESTMCP_TEST_REDIS_URL, default
// redis://127.0.0.1:6379/15) once it answers a PING within 2 s.
// Unreachable: a loud skip, or a failure when RESTMCP_REQUIRE_REDIS=1.
func RedisURL(tb testing.TB) string {
	tb.Helper()
	url := os.Getenv("RESTMCP_TEST_REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/15"
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		tb.Fatalf("RESTMCP_TEST_REDIS_URL=%q: %v", url, err)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		msg := fmt.Sprintf("\n*** REDIS UNREACHABLE at %s: %v\n*** The tests that need Redis did NOT run. Start redis-server, or set RESTMCP_REQUIRE_REDIS=1 to make this a failure.", url, err)
		Unavailable(tb, "RESTMCP_REQUIRE_REDIS", "Redis", msg)
	}
	return url
}

// Redis is a client of the test Redis (RedisURL), closed when tb ends.
func Redis(tb testing.TB) *redis.Client {
	tb.Helper()
	opt, err := redis.ParseURL(RedisURL(tb))
	if err != nil {
		tb.Fatal(err)
	}
	c := redis.NewClient(opt)
	tb.Cleanup(func() { _ = c.Close() })
	return c
}
