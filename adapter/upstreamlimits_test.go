package adapter

import (
	"net/http"
	"reflect"
	"testing"
	"time"
)

// TestUpstreamRateLimitLines: each family of rate-limit headers an API
// sends on 403, 429 or 503 becomes the one line a model acts on and the
// rate_limit object; a 403 that says nothing of a limit is not one.
func TestUpstreamRateLimitLines(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name    string
		status  int
		headers map[string]string
		line    string // "" when not a rate limit
		object  map[string]any
	}{
		{"GitHub: 403, x-ratelimit-* with a Unix reset", 403,
			map[string]string{"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1796472042", "X-RateLimit-Used": "5000"},
			"rate limited by the API: retry after 42 s (0 of 5000 calls left; the limit resets in 42 s)",
			map[string]any{"retry_after_seconds": int64(42), "remaining": int64(0), "limit": int64(5000), "reset_seconds": int64(42)}},
		{"GitHub secondary limit: 403 with Retry-After", 403, map[string]string{"Retry-After": "60"},
			"rate limited by the API: retry after 60 s", map[string]any{"retry_after_seconds": int64(60)}},
		{"IETF RateLimit and RateLimit-Policy", 429,
			map[string]string{"RateLimit": `"burst";r=3;t=1, "daily";r=0;t=42`, "RateLimit-Policy": `"burst";q=10;w=1, "daily";q=100;w=86400`},
			"rate limited by the API: retry after 42 s (0 of 10 calls left; the limit resets in 42 s)",
			map[string]any{"retry_after_seconds": int64(42), "remaining": int64(0), "limit": int64(10), "reset_seconds": int64(42)}},
		{"RateLimit-Limit / -Remaining / -Reset in seconds", 429,
			map[string]string{"RateLimit-Limit": "100", "RateLimit-Remaining": "0", "RateLimit-Reset": "17"},
			"rate limited by the API: retry after 17 s (0 of 100 calls left; the limit resets in 17 s)",
			map[string]any{"retry_after_seconds": int64(17), "remaining": int64(0), "limit": int64(100), "reset_seconds": int64(17)}},
		{"Retry-After as an HTTP date", 503, map[string]string{"Retry-After": "Sat, 05 Dec 2026 12:02:00 GMT"},
			"rate limited by the API: retry after 120 s", map[string]any{"retry_after_seconds": int64(120)}},
		{"429 with nothing else", 429, nil,
			"rate limited by the API: it did not say when to retry; wait before calling again", map[string]any{}},
		{"403 without a limit signal", 403, map[string]string{"X-RateLimit-Remaining": "4999"}, "", nil},
		{"503 without Retry-After", 503, nil, "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range c.headers {
				h.Set(k, v)
			}
			l, limited := readUpstreamLimit(c.status, h, now)
			if !limited {
				if c.line != "" {
					t.Errorf("not read as a rate limit; want %q", c.line)
				}
				return
			}
			if c.line == "" {
				t.Fatalf("read as a rate limit: %q", l.line())
			}
			if got := l.line(); got != c.line {
				t.Errorf("line %q\nwant %q", got, c.line)
			}
			if got := l.object()["rate_limit"]; !reflect.DeepEqual(got, c.object) {
				t.Errorf("object %#v\nwant %#v", got, c.object)
			}
		})
	}
}
