package metering

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Script deadlines make every counting script's outcome known to the
// replica that sent it. A script that reaches Redis late (Redis was stopped
// or stalled, and the replica has given up waiting and answered 503, or
// admitted the call Degraded under fail_open and buffered it) would
// otherwise still count when Redis resumes: a call counted but never
// served, or counted twice once the buffer is replayed. So each admission,
// refund and replay carries the time, by Redis's clock, after which it must
// not apply: the caller's context deadline less a margin, moved into Redis
// time by the measured offset between the two clocks. Past it the script
// changes nothing and answers an error; the replica has already settled
// the call as not counted (docs/security.md H8).
//
// The deadline is also never later than the Redis client's read timeout
// from now: a single Redis's client gives up on an answer at its read
// timeout, and a script that applied after that would count a call the
// replica had refused. (go-redis's Cluster client waits past its read
// timeout until the context ends; the bound holds there too, so a call's
// outcome is known within the read timeout on every client.)

// maxDeadlineMargin is the most of a context's remaining time kept back
// from a script's deadline, so that a script that applies does so while the
// replica still waits for its answer (clock offset error and the answer's
// trip back fit in it).
const maxDeadlineMargin = 250 * time.Millisecond

// errDeadlinePassed is the script's answer when it ran after its deadline.
const errDeadlinePassed = "restmcp: deadline passed; nothing counted"

// clockOffset is Redis TIME minus the replica's clock, in µs, measured from
// a round trip; known is false until one has been measured.
type clockOffset struct {
	us    atomic.Int64
	known atomic.Bool
}

// observe records an offset from one round trip that started at t0 and
// answered at t1 with Redis time redisUS. Slow round trips (over 50 ms)
// measure too loosely and are ignored.
func (o *clockOffset) observe(t0, t1 time.Time, redisUS int64) {
	rtt := t1.Sub(t0)
	if rtt < 0 || rtt > 50*time.Millisecond {
		return
	}
	o.us.Store(redisUS - t0.Add(rtt/2).UnixMicro())
	o.known.Store(true)
}

// scriptDeadline is the deadline argument for a counting script run under
// ctx: "" when ctx has no deadline (nothing to fall behind), else µs in the
// script's clock (Redis TIME, or the test override). It measures the clock
// offset with one TIME round trip when none is known yet; if that fails,
// the error is returned and the script must not be sent.
func (m *RedisMeter) scriptDeadline(ctx context.Context) (string, error) {
	d, ok := ctx.Deadline()
	if rt := m.readTimeout; rt > 0 && (!ok || time.Until(d) > rt) {
		d, ok = time.Now().Add(rt), true
	}
	if !ok {
		return "", nil
	}
	left := time.Until(d)
	margin := min(maxDeadlineMargin, left/4)
	if m.serverNow != nil {
		return strconv.FormatInt(m.serverNow().Add(left-margin).UnixMicro(), 10), nil
	}
	if !m.offset.known.Load() {
		t0 := time.Now()
		rt, err := m.rdb.Time(ctx).Result()
		if err != nil {
			return "", err
		}
		m.offset.observe(t0, time.Now(), rt.UnixMicro())
		if !m.offset.known.Load() {
			return "", nil // too slow to measure: no deadline this time
		}
	}
	return strconv.FormatInt(d.Add(-margin).UnixMicro()+m.offset.us.Load(), 10), nil
}

// clientReadTimeout is the read timeout of a go-redis client (0 when it
// has none, or for another client).
func clientReadTimeout(c any) time.Duration {
	switch c := c.(type) {
	case *redis.Client:
		return positive(c.Options().ReadTimeout)
	case *redis.ClusterClient:
		return positive(c.Options().ReadTimeout)
	}
	return 0
}

// positive is d, or 0 when d is not positive (go-redis's -1 and -2 mean
// no timeout).
func positive(d time.Duration) time.Duration { return max(d, 0) }
