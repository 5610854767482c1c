package metering

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/redis/go-redis/v9"
	"github.com/restmcp/restmcp/internal/testenv"
)

// defaultTestRedisURL is used when RESTMCP_TEST_REDIS_URL is unset.
const defaultTestRedisURL = "redis://127.0.0.1:6379/15"

// testRedis connects to the test Redis server. When it is unreachable the
// test is skipped loudly, or fails when RESTMCP_REQUIRE_REDIS=1.
func testRedis(tb testing.TB) *redis.Client {
	tb.Helper()
	url := os.Getenv("RESTMCP_TEST_REDIS_URL")
	if url == "" {
		url = defaultTestRedisURL
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		tb.Fatalf("RESTMCP_TEST_REDIS_URL=%q: %v", url, err)
	}
	// Probe with a client that does not retry, so that skipping is quick.
	probeOpt := *opt
	probeOpt.DialerRetries, probeOpt.MaxRetries, probeOpt.DialTimeout = 1, -1, time.Second
	probe := redis.NewClient(&probeOpt)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err = probe.Ping(ctx).Err()
	_ = probe.Close()
	if err != nil {
		msg := fmt.Sprintf("\n"+
			"************************************************************\n"+
			"*** REDIS UNREACHABLE at %s: %v\n"+
			"*** The Redis meter was NOT tested. Start redis-server, or set\n"+
			"*** RESTMCP_REQUIRE_REDIS=1 to turn this skip into a failure.\n"+
			"************************************************************", url, err)
		testenv.Unavailable(tb, "RESTMCP_REQUIRE_REDIS", "Redis", msg)
	}
	c := redis.NewClient(opt)
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// newKeyID returns a keyID no other test or package uses. With a client,
// every key of that keyID is deleted when the test ends (no FLUSHDB: other
// packages share the database).
func newKeyID(tb testing.TB, c *redis.Client) string {
	tb.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := "test-" + hex.EncodeToString(b[:])
	if c != nil {
		tb.Cleanup(func() { deleteKeys(tb, c, id) })
	}
	return id
}

// deleteKeys deletes every key of keyID.
func deleteKeys(tb testing.TB, c *redis.Client, keyID string) {
	ctx := context.Background()
	iter := c.Scan(ctx, 0, Key(keyID, "*"), 100).Iterator()
	for iter.Next(ctx) {
		if err := c.Del(ctx, iter.Val()).Err(); err != nil {
			tb.Errorf("cleanup: deleting %s: %v", iter.Val(), err)
		}
	}
	if err := iter.Err(); err != nil {
		tb.Errorf("cleanup: scanning keys of %s: %v", keyID, err)
	}
}

// fakeClock is a controlled clock, safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock(t time.Time) *fakeClock { return &fakeClock{t: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// implementation builds one meter under test with a controlled clock, and
// returns it with a fresh keyID.
type implementation struct {
	name string
	new  func(t *testing.T, clk *fakeClock) (Meter, string)
}

// implementations lists both meters. The Redis meter gets clk in place of
// Redis TIME (through the script's test-only time argument), so both run
// the same deterministic scenarios and must give identical answers.
func implementations() []implementation {
	return []implementation{
		{name: "memory", new: func(t *testing.T, clk *fakeClock) (Meter, string) {
			return NewMemory(Options{Now: clk.Now}), newKeyID(t, nil)
		}},
		{name: "redis", new: func(t *testing.T, clk *fakeClock) (Meter, string) {
			c := testRedis(t)
			m := NewRedis(c, Options{})
			m.serverNow = clk.Now
			m.clientNow = clk.Now
			return m, newKeyID(t, c)
		}},
	}
}

// forEach runs test once per implementation.
func forEach(t *testing.T, test func(t *testing.T, impl implementation)) {
	for _, impl := range implementations() {
		t.Run(impl.name, func(t *testing.T) {
			t.Parallel()
			test(t, impl)
		})
	}
}

// testStart is a fixed time in November 2026 (UTC).
var testStart = time.Date(2026, time.November, 15, 12, 0, 0, 0, time.UTC)

// decisionRecord is the cmp option for comparing Decisions: every exported
// field is compared; the unexported one is the handle of the call's record
// in Redis, a random id, whose effects TestSettle* check.
var decisionRecord = cmpopts.IgnoreUnexported(Decision{})
