package metering

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestRedisAdmitCallRedisTime checks the production clock: without the
// test override, a call is admitted at Redis TIME, read just before and
// just after it.
func TestRedisAdmitCallRedisTime(t *testing.T) {
	c := testRedis(t)
	id := newKeyID(t, c)
	m := NewRedis(c, Options{})
	p := PlansFromRateLimit(2, time.Hour).Default()
	ctx := context.Background()
	before, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	d := mustAdmitCall(t, m, rateCall(id, p))
	after, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if !d.Allowed || d.Count != 1 || d.Remaining != 1 || d.At.Before(before.Truncate(time.Microsecond)) || d.At.After(after) {
		t.Errorf("got %+v, want allowed, Count 1, Remaining 1, At in [%v, %v]", d, before, after)
	}
	if r := mustReport(t, m, id, p); r.Periods[1].Used != 1 || r.RateLimits[0].Remaining != 1 {
		t.Errorf("Report = %+v, want 1 used and 1 remaining", r)
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

	p := PlansFromRateLimit(0, 0).Default()
	d, err := m.AdmitCall(ctx, rateCall("abc123", p))
	if !errors.Is(err, ErrUnavailable) || d.Allowed {
		t.Errorf("AdmitCall = %+v, %v; want not allowed, ErrUnavailable", d, err)
	}
	if _, err := m.Report(ctx, "abc123", p); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Report error = %v, want ErrUnavailable", err)
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
	if _, err := m.AdmitCall(ctx, rateCall(newKeyID(t, c), PlansFromRateLimit(0, 0).Default())); !errors.Is(err, context.Canceled) || !errors.Is(err, ErrUnavailable) {
		t.Errorf("AdmitCall error = %v, want context.Canceled and ErrUnavailable", err)
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
