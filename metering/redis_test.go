package metering

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestRedisConcurrentBurstRedisTime is TestAdmitConcurrentBurst with the
// production clock, Redis TIME: 200 simultaneous calls at 100 per 60 s.
func TestRedisConcurrentBurstRedisTime(t *testing.T) {
	c := testRedis(t)
	id := newKeyID(t, c)
	m := NewRedis(c, Options{})
	const interval = 600 * time.Millisecond

	const calls = 200
	var allowed, refused atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range calls {
		wg.Go(func() {
			d, err := m.Admit(context.Background(), id)
			switch {
			case err != nil:
				t.Errorf("Admit: %v", err)
			case d.Allowed:
				allowed.Add(1)
			default:
				refused.Add(1)
				if d.RetryAfter <= 0 || d.RetryAfter > interval || d.Reset <= 0 || d.Reset > time.Minute || d.Remaining != 0 || d.Count != 100 {
					t.Errorf("refused decision %+v: want 0 < RetryAfter ≤ %v, 0 < Reset ≤ 1m, Remaining 0, Count 100", d, interval)
				}
			}
		})
	}
	wg.Wait()
	if elapsed := time.Since(start); elapsed >= interval {
		// One call is regained every 600 ms, so the count is exact only if
		// the burst took less than that.
		t.Skipf("200 calls took %v ≥ %v (machine too loaded); the exact count cannot be asserted", elapsed, interval)
	}
	if allowed.Load() != 100 || refused.Load() != 100 {
		t.Fatalf("got %d allowed, %d refused; want 100, 100", allowed.Load(), refused.Load())
	}
	if n := mustUsage(t, m, id); n != 100 {
		t.Errorf("Usage = %d, want 100", n)
	}
}

// TestRedisWindowRecoveryRedisTime checks recovery in real time: at 2 calls
// per second the third call is refused, and admitted after RetryAfter.
func TestRedisWindowRecoveryRedisTime(t *testing.T) {
	c := testRedis(t)
	id := newKeyID(t, c)
	m := NewRedis(c, Options{Limit: 2, Window: time.Second})
	mustAdmit(t, m, id)
	mustAdmit(t, m, id)
	d := mustAdmit(t, m, id)
	if d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > 500*time.Millisecond {
		t.Fatalf("third call: got %+v, want refused with 0 < RetryAfter ≤ 500ms", d)
	}
	time.Sleep(d.RetryAfter)
	if d := mustAdmit(t, m, id); !d.Allowed || d.Count != 3 {
		t.Fatalf("after RetryAfter: got %+v, want allowed with Count 3", d)
	}
}

// TestRedisKeysAndTTLs checks the exact key names written and their expiry.
func TestRedisKeysAndTTLs(t *testing.T) {
	c := testRedis(t)
	id := newKeyID(t, c)
	m := NewRedis(c, Options{})
	clk := newFakeClock(testStart)
	m.serverNow, m.clientNow = clk.Now, clk.Now
	mustAdmit(t, m, id)

	ctx := context.Background()
	usage := "restmcp:{" + id + "}:usage:202611"
	if n, err := c.Get(ctx, usage).Int64(); err != nil || n != 1 {
		t.Errorf("GET %s = %d, %v; want 1", usage, n, err)
	}
	if ttl := c.TTL(ctx, usage).Val(); ttl <= UsageTTL-time.Minute || ttl > UsageTTL {
		t.Errorf("TTL %s = %v, want about %v", usage, ttl, UsageTTL)
	}
	rl := "restmcp:{" + id + "}:rl"
	if tat, err := c.Get(ctx, rl).Int64(); err != nil || tat != testStart.UnixMicro()+600_000 {
		t.Errorf("GET %s = %d, %v; want %d (now + 600 ms, µs)", rl, tat, err, testStart.UnixMicro()+600_000)
	}
	if ttl := c.PTTL(ctx, rl).Val(); ttl <= 0 || ttl > 600*time.Millisecond {
		t.Errorf("PTTL %s = %v, want in (0, 600ms]", rl, ttl)
	}
	keys, err := c.Keys(ctx, Key(id, "*")).Result()
	if err != nil || len(keys) != 2 {
		t.Errorf("keys of %s = %q, %v; want exactly the two above", id, keys, err)
	}
}

// TestRedisMonthFromRedisTime checks that the month is Redis's, not the
// replica's: a replica whose clock is still in November counts a call made
// on Redis's 1 December into December; one more than a month off is refused
// with an error rather than counted in the wrong month.
func TestRedisMonthFromRedisTime(t *testing.T) {
	c := testRedis(t)
	id := newKeyID(t, c)
	m := NewRedis(c, Options{})
	replica := newFakeClock(time.Date(2026, time.November, 30, 23, 59, 58, 0, time.UTC))
	server := newFakeClock(time.Date(2026, time.December, 1, 0, 0, 1, 0, time.UTC))
	m.clientNow, m.serverNow = replica.Now, server.Now

	if d := mustAdmit(t, m, id); !d.Allowed || d.Count != 1 {
		t.Fatalf("got %+v, want allowed with Count 1", d)
	}
	ctx := context.Background()
	if n, _ := c.Get(ctx, Key(id, "usage", "202612")).Int64(); n != 1 {
		t.Errorf("December counter = %d, want 1", n)
	}
	if n := c.Exists(ctx, Key(id, "usage", "202611")).Val(); n != 0 {
		t.Errorf("November counter exists, want none")
	}
	if n := mustUsage(t, m, id); n != 1 {
		t.Errorf("Usage = %d, want 1 (December's, by Redis TIME)", n)
	}

	server.Advance(45 * 24 * time.Hour) // mid-January on Redis, November on the replica
	_, err := m.Admit(ctx, id)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "more than a month apart") {
		t.Errorf("Admit with a 6-week skew: error = %v, want ErrUnavailable about the clocks", err)
	}
	if _, err := m.Usage(ctx, id); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Usage with a 6-week skew: error = %v, want ErrUnavailable", err)
	}
}

// TestLuaYYYYMM checks the script's calendar against Go's around every
// month boundary from 1970 to 2200 (leap years and centuries included).
func TestLuaYYYYMM(t *testing.T) {
	c := testRedis(t)
	var secs []any
	var want []string
	for m := time.Date(1970, time.February, 1, 0, 0, 0, 0, time.UTC); m.Year() < 2200; m = m.AddDate(0, 1, 0) {
		for _, tm := range []time.Time{m.Add(-time.Second), m, m.Add(12 * time.Hour)} {
			secs = append(secs, tm.Unix())
			want = append(want, period(tm))
		}
	}
	script := redis.NewScript(luaPrelude + `
local out = {}
for i = 1, #ARGV do out[i] = yyyymm(tonumber(ARGV[i])) end
return out
`)
	got, err := script.Run(context.Background(), c, nil, secs...).StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d results, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("yyyymm(%d) = %s, want %s (%v)", secs[i], got[i], want[i], time.Unix(secs[i].(int64), 0).UTC())
		}
	}
}

// TestRedisUnavailable checks that a Redis outage is an error wrapping
// ErrUnavailable, never a panic or an admission.
func TestRedisUnavailable(t *testing.T) {
	c := redis.NewClient(&redis.Options{
		Addr:          "127.0.0.1:1", // nothing listens there
		DialTimeout:   200 * time.Millisecond,
		DialerRetries: 1,
		MaxRetries:    -1,
	})
	t.Cleanup(func() { _ = c.Close() })
	m := NewRedis(c, Options{})
	ctx := context.Background()

	d, err := m.Admit(ctx, "abc123")
	if !errors.Is(err, ErrUnavailable) || d.Allowed {
		t.Errorf("Admit = %+v, %v; want not allowed, ErrUnavailable", d, err)
	}
	if _, err := m.Usage(ctx, "abc123"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Usage error = %v, want ErrUnavailable", err)
	}
	if err := m.Ping(ctx); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Ping error = %v, want ErrUnavailable", err)
	}
}

// TestRedisCancelledContext checks that a cancelled context is an error
// that still matches context.Canceled.
func TestRedisCancelledContext(t *testing.T) {
	c := testRedis(t)
	m := NewRedis(c, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Admit(ctx, newKeyID(t, c)); !errors.Is(err, context.Canceled) || !errors.Is(err, ErrUnavailable) {
		t.Errorf("Admit error = %v, want context.Canceled and ErrUnavailable", err)
	}
}

func TestNewRedisNilClientPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewRedis(nil) did not panic")
		}
	}()
	NewRedis(nil, Options{})
}

// BenchmarkRedisAdmit measures admissions per second through the real
// script, from parallel goroutines, on one hot key and on a key per
// goroutine. The limit is set high enough that every call is admitted.
func BenchmarkRedisAdmit(b *testing.B) {
	c := testRedis(b)
	for _, bc := range []struct {
		name   string
		perKey bool
	}{{"one-key", false}, {"key-per-goroutine", true}} {
		b.Run(bc.name, func(b *testing.B) {
			m := NewRedis(c, Options{Limit: 1 << 40, Window: time.Hour})
			shared := newKeyID(b, c)
			var admitted atomic.Int64
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				id := shared
				if bc.perKey {
					id = newKeyID(b, c)
				}
				for pb.Next() {
					d, err := m.Admit(context.Background(), id)
					if err != nil {
						b.Error(err)
						return
					}
					if d.Allowed {
						admitted.Add(1)
					}
				}
			})
			b.ReportMetric(float64(admitted.Load())/b.Elapsed().Seconds(), "admissions/s")
		})
	}
}

// BenchmarkMemoryAdmit is the in-memory baseline for BenchmarkRedisAdmit.
func BenchmarkMemoryAdmit(b *testing.B) {
	m := NewMemory(Options{Limit: 1 << 40, Window: time.Hour})
	var admitted atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if d, err := m.Admit(context.Background(), "bench"); err == nil && d.Allowed {
				admitted.Add(1)
			}
		}
	})
	b.ReportMetric(float64(admitted.Load())/b.Elapsed().Seconds(), "admissions/s")
}
