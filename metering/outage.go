package metering

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Defaults of [OutageOptions].
const (
	// DefaultOutageBuffer is the number of calls an OutageMeter counts
	// locally while Redis is down before it drops the oldest.
	DefaultOutageBuffer = 100_000
	// DefaultOutageRetry is how often an OutageMeter probes a down Redis.
	DefaultOutageRetry = time.Second
)

// OutageOptions configures [NewOutageMeter]. The zero value fails closed.
type OutageOptions struct {
	// Policy is OutageFailClosed or OutageFailOpen; "" means
	// OutageFailClosed.
	Policy Outage
	// BufferSize is the most calls counted locally while Redis is down
	// (fail_open only); beyond it the oldest are dropped and counted in
	// OutageStats.Dropped. Zero or negative means DefaultOutageBuffer
	// (100,000, a few MB).
	BufferSize int
	// RetryInterval is how often Redis is probed while down, and the
	// longest a recovered Redis waits for its replay. Zero or negative
	// means DefaultOutageRetry (1 s).
	RetryInterval time.Duration
	// Logger receives Warn records when Redis goes down and when calls are
	// dropped, and an Info record when Redis answers again. Nil discards.
	Logger *slog.Logger
}

// OutageStats are an OutageMeter's counters since it was created, for
// metrics.
type OutageStats struct {
	// Down is true while Redis is considered down (fail_open only).
	Down bool
	// Buffered is the number of entries waiting to be replayed: one per
	// call or refund, fewer after a failed replay put back aggregates.
	Buffered int
	// Degraded counts calls admitted without Redis.
	Degraded int64
	// Dropped counts calls and refunds dropped because the buffer was full.
	Dropped int64
	// Replayed counts calls and refunds written back to Redis.
	Replayed int64
	// DroppedEvents counts usage events lost while Redis was down.
	DroppedEvents int64
}

// OutageMeter applies an outage policy to a [RedisMeter]. Create it with
// [NewOutageMeter] and stop it with Close; it is safe for concurrent use.
//
// Under fail_closed it passes every call through: a Redis failure is an
// error wrapping [ErrUnavailable], and the adapter answers 503 with
// Retry-After.
//
// Under fail_open, a call that fails with ErrUnavailable (and not because
// its own context ended) marks Redis down and is admitted with a Degraded
// Decision: no rate limit or quota is checked, and its cost is kept in a
// bounded local buffer (the oldest entries are dropped beyond BufferSize,
// counted in OutageStats.Dropped and logged). While down, calls do not
// wait for Redis at all. A background goroutine probes Redis every
// RetryInterval and, once it answers, replays the buffer into the day,
// month and per-tool counters of each call's time (by this replica's
// clock), aggregated per key, tool and day, then sends calls to Redis
// again. Replay is at least once: if Redis fails after applying an
// aggregate but before answering, that aggregate is counted twice. Usage
// events are not buffered: those recorded while down are dropped and
// counted. Rate-limit state (GCRA) is not replayed.
type OutageMeter struct {
	m      *RedisMeter
	policy Outage
	size   int
	retry  time.Duration
	log    *slog.Logger

	mu    sync.Mutex
	down  bool
	buf   []pending // ring of at most size entries
	head  int       // index of the oldest entry
	n     int       // entries in buf
	stats OutageStats

	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// pending is one buffered call (calls 1, cost ≥ 0), refund (calls -1,
// cost ≤ 0) or aggregate.
type pending struct {
	keyID, tool string
	at          time.Time
	cost, calls int64
	entries     int64 // buffered calls and refunds aggregated into this one
}

// NewOutageMeter wraps m with the policy of opts. Under fail_open it
// starts the goroutine that replays buffered counts; it runs until ctx
// ends or Close is called. The caller logs the policy at startup.
func NewOutageMeter(ctx context.Context, m *RedisMeter, opts OutageOptions) *OutageMeter {
	o := &OutageMeter{
		m:      m,
		policy: opts.Policy,
		size:   opts.BufferSize,
		retry:  opts.RetryInterval,
		log:    opts.Logger,
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	if o.policy == "" {
		o.policy = OutageFailClosed
	}
	if o.size <= 0 {
		o.size = DefaultOutageBuffer
	}
	if o.retry <= 0 {
		o.retry = DefaultOutageRetry
	}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	if o.policy != OutageFailOpen {
		close(o.done)
		o.cancel = func() {}
		return o
	}
	ctx, o.cancel = context.WithCancel(ctx)
	go o.run(ctx)
	return o
}

// Policy returns the outage policy in force.
func (o *OutageMeter) Policy() Outage { return o.policy }

// AdmitCall is [RedisMeter.AdmitCall] under the outage policy.
func (o *OutageMeter) AdmitCall(ctx context.Context, c Call) (Decision, error) {
	if o.policy != OutageFailOpen {
		return o.m.AdmitCall(ctx, c)
	}
	if err := c.validate(); err != nil {
		return Decision{}, err
	}
	if !o.isDown() {
		d, err := o.m.AdmitCall(ctx, c)
		if !o.failsOpen(ctx, err) {
			return d, err
		}
	}
	at := o.m.replicaNow().UTC()
	o.push(pending{keyID: c.KeyID, tool: c.Tool, at: at, cost: c.Cost, calls: 1, entries: 1}, true)
	return Decision{Allowed: true, Degraded: true, Plan: c.Plan.Name, Cost: c.Cost, At: at}, nil
}

// Refund is [RedisMeter.Refund] under the outage policy; under fail_open a
// refund that cannot reach Redis, or of a Degraded call, is buffered.
func (o *OutageMeter) Refund(ctx context.Context, c Call, d Decision) error {
	if o.policy != OutageFailOpen || (!d.Degraded && !o.isDown()) {
		err := o.m.Refund(ctx, c, d)
		if o.policy != OutageFailOpen || !o.failsOpen(ctx, err) {
			return err
		}
	}
	if !d.Allowed {
		return nil
	}
	o.push(pending{keyID: c.KeyID, tool: c.Tool, at: d.At, cost: -d.Cost, calls: -1, entries: 1}, false)
	return nil
}

// Report is [RedisMeter.Report]; it fails while Redis is down, whatever the
// policy, and does not include buffered counts.
func (o *OutageMeter) Report(ctx context.Context, keyID string, plan *Plan) (Report, error) {
	return o.m.Report(ctx, keyID, plan)
}

// RecordEvent is [RedisMeter.RecordEvent]; under fail_open an event that
// cannot be written is dropped and counted, not returned as an error.
func (o *OutageMeter) RecordEvent(ctx context.Context, e Event) error {
	if o.policy == OutageFailOpen && o.isDown() {
		o.mu.Lock()
		o.stats.DroppedEvents++
		o.mu.Unlock()
		return nil
	}
	err := o.m.RecordEvent(ctx, e)
	if o.policy == OutageFailOpen && o.failsOpen(ctx, err) {
		o.mu.Lock()
		o.stats.DroppedEvents++
		o.mu.Unlock()
		return nil
	}
	return err
}

// RecordEvents is [RedisMeter.RecordEvents] under the policy, as
// RecordEvent: under fail_open events that cannot be written are dropped
// and counted.
func (o *OutageMeter) RecordEvents(ctx context.Context, events []Event) error {
	if o.policy == OutageFailOpen && o.isDown() {
		o.mu.Lock()
		o.stats.DroppedEvents += int64(len(events))
		o.mu.Unlock()
		return nil
	}
	err := o.m.RecordEvents(ctx, events)
	if o.policy == OutageFailOpen && o.failsOpen(ctx, err) {
		o.mu.Lock()
		o.stats.DroppedEvents += int64(len(events))
		o.mu.Unlock()
		return nil
	}
	return err
}

// Ping is [RedisMeter.Ping]: readiness reflects Redis whatever the policy.
func (o *OutageMeter) Ping(ctx context.Context) error { return o.m.Ping(ctx) }

// Stats returns the counters.
func (o *OutageMeter) Stats() OutageStats {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.stats
	s.Down, s.Buffered = o.down, o.n
	return s
}

// Close stops the replay goroutine and makes a last attempt, bounded by
// ctx, to replay what is buffered. It returns an error when entries remain
// unreplayed (they are lost).
func (o *OutageMeter) Close(ctx context.Context) error {
	o.cancel()
	<-o.done
	if o.Stats().Buffered == 0 {
		return nil
	}
	if err := o.Flush(ctx); err != nil {
		return fmt.Errorf("metering: %d buffered calls not replayed: %w", o.Stats().Buffered, err)
	}
	return nil
}

// failsOpen reports whether err is a store failure to fail open on, and
// if so marks Redis down.
//
// A call whose own context ran out of time while waiting for Redis counts
// as a store failure (a stalled Redis looks exactly like that); one whose
// context was cancelled (the client left) does not.
func (o *OutageMeter) failsOpen(ctx context.Context, err error) bool {
	if err == nil || !errors.Is(err, ErrUnavailable) || errors.Is(ctx.Err(), context.Canceled) {
		return false
	}
	o.mu.Lock()
	wasDown := o.down
	o.down = true
	o.mu.Unlock()
	if !wasDown {
		o.log.Warn("metering store down; failing open: calls admitted without limits and counted locally",
			"error", err, "buffer_size", o.size)
	}
	return true
}

func (o *OutageMeter) isDown() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.down
}

// push buffers p, dropping the oldest entry when full.
func (o *OutageMeter) push(p pending, degraded bool) {
	o.mu.Lock()
	if degraded {
		o.stats.Degraded++
	}
	if o.buf == nil {
		o.buf = make([]pending, o.size)
	}
	dropped := o.n == o.size
	if dropped {
		o.stats.Dropped += o.buf[o.head].entries
		o.head = (o.head + 1) % o.size
		o.n--
	}
	o.buf[(o.head+o.n)%o.size] = p
	o.n++
	total := o.stats.Dropped
	o.mu.Unlock()
	if dropped && (total == 1 || total%1000 == 0) {
		o.log.Warn("metering outage buffer full; dropping the oldest counts", "dropped", total, "buffer_size", o.size)
	}
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// take removes and returns every buffered entry, oldest first.
func (o *OutageMeter) take() []pending {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.take0()
}

// putBack returns unreplayed entries to the front of the buffer (as far as
// room allows; what does not fit is dropped and counted).
func (o *OutageMeter) putBack(ps []pending) {
	o.mu.Lock()
	defer o.mu.Unlock()
	rest := o.take0()
	all := append(ps, rest...)
	if over := len(all) - o.size; over > 0 {
		for _, p := range all[:over] {
			o.stats.Dropped += p.entries
		}
		all = all[over:]
	}
	if o.buf == nil {
		o.buf = make([]pending, o.size)
	}
	copy(o.buf, all)
	o.head, o.n = 0, len(all)
}

// take0 is take for a caller holding o.mu.
func (o *OutageMeter) take0() []pending {
	out := make([]pending, 0, o.n)
	for i := range o.n {
		out = append(out, o.buf[(o.head+i)%o.size])
	}
	o.head, o.n = 0, 0
	return out
}

// Flush replays the buffer into Redis now, aggregated per key, tool and
// day. On failure the unreplayed entries stay buffered and the error
// (wrapping ErrUnavailable) is returned.
func (o *OutageMeter) Flush(ctx context.Context) error {
	ps := o.take()
	if len(ps) == 0 {
		return nil
	}
	type aggKey struct{ keyID, tool, day string }
	var order []aggKey
	agg := make(map[aggKey]*pending)
	for _, p := range ps {
		k := aggKey{p.keyID, p.tool, dayPeriod(p.at)}
		a := agg[k]
		if a == nil {
			a = &pending{keyID: p.keyID, tool: p.tool, at: p.at}
			agg[k] = a
			order = append(order, k)
		}
		a.cost += p.cost
		a.calls += p.calls
		a.entries += p.entries
	}
	for i, k := range order {
		a := agg[k]
		if err := o.m.adjust(ctx, a.keyID, a.tool, a.at, a.cost, a.calls); err != nil {
			rest := make([]pending, 0, len(order)-i)
			for _, k := range order[i:] {
				rest = append(rest, *agg[k])
			}
			o.putBack(rest)
			return err
		}
	}
	var n int64
	for _, a := range agg {
		n += a.entries
	}
	o.mu.Lock()
	o.stats.Replayed += n
	o.mu.Unlock()
	return nil
}

// run probes Redis while it is down and replays the buffer once it
// answers.
func (o *OutageMeter) run(ctx context.Context) {
	defer close(o.done)
	t := time.NewTicker(o.retry)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-o.wake:
			if o.isDown() {
				continue // wait for the ticker: no probe per call
			}
		}
		if o.Stats().Buffered == 0 && !o.isDown() {
			continue
		}
		o.recover(ctx)
	}
}

// recover replays the buffer if Redis answers, and marks it up once the
// buffer is empty.
func (o *OutageMeter) recover(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, o.retry)
	defer cancel()
	if err := o.m.Ping(pctx); err != nil {
		return
	}
	for range 3 { // calls still degrade while replaying; catch up a few times
		if err := o.Flush(pctx); err != nil {
			return
		}
		o.mu.Lock()
		if o.n == 0 {
			wasDown := o.down
			o.down = false
			s := o.stats
			o.mu.Unlock()
			if wasDown {
				o.log.Info("metering store answering again; buffered counts replayed",
					"replayed", s.Replayed, "dropped", s.Dropped, "degraded", s.Degraded)
			}
			return
		}
		o.mu.Unlock()
	}
}
