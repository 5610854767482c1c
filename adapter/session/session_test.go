package session

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/restmcp/restmcp/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestStoresKeepOwners runs both stores through a session's life: created
// with or without an owner, touched, claimed once (a second claim keeps the
// first owner), deleted; an ended session is neither touched nor claimed.
func TestStoresKeepOwners(t *testing.T) {
	for name, store := range map[string]Store{"memory": NewMemoryStore(nil), "redis": NewRedisStore(testRedis(t))} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			owned, open := NewID(), NewID()
			t.Cleanup(func() { _ = store.Delete(ctx, owned); _ = store.Delete(ctx, open) })
			if err := store.Create(ctx, owned, "k:a", time.Minute); err != nil {
				t.Fatal(err)
			}
			if err := store.Create(ctx, open, "", time.Minute); err != nil {
				t.Fatal(err)
			}
			check := func(what string, gotOwner string, gotAlive bool, err error, owner string, alive bool) {
				t.Helper()
				if err != nil || gotOwner != owner || gotAlive != alive {
					t.Errorf("%s = %q, %v, %v; want %q, %v", what, gotOwner, gotAlive, err, owner, alive)
				}
			}
			o, ok, err := store.Touch(ctx, owned, time.Minute)
			check("Touch(owned)", o, ok, err, "k:a", true)
			o, ok, err = store.Claim(ctx, owned, "k:b")
			check("Claim(owned, b)", o, ok, err, "k:a", true)
			o, ok, err = store.Touch(ctx, open, time.Minute)
			check("Touch(open)", o, ok, err, "", true)
			o, ok, err = store.Claim(ctx, open, "k:b")
			check("Claim(open, b)", o, ok, err, "k:b", true)
			o, ok, err = store.Claim(ctx, open, "k:c")
			check("Claim(open, c)", o, ok, err, "k:b", true)
			if err := store.Delete(ctx, open); err != nil {
				t.Fatal(err)
			}
			o, ok, err = store.Touch(ctx, open, time.Minute)
			check("Touch(deleted)", o, ok, err, "", false)
			o, ok, err = store.Claim(ctx, open, "k:c")
			check("Claim(deleted)", o, ok, err, "", false)
		})
	}
}

// testRedis is the test Redis (RESTMCP_TEST_REDIS_URL, default
// redis://127.0.0.1:6379/15); unreachable, a loud skip, or a failure when
// RESTMCP_REQUIRE_REDIS=1.
func testRedis(t *testing.T) *redis.Client {
	url := os.Getenv("RESTMCP_TEST_REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/15"
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		testenv.Unavailable(t, "RESTMCP_REQUIRE_REDIS", "Redis", "*** REDIS UNREACHABLE at "+url+": the Redis session store was NOT tested: "+err.Error())
	}
	return c
}
