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
	// Down is true while Redis, or one shard of a Redis Cluster, is
	// considered down (fail_open only).
	Down bool
	// DownShards is how many shards are down (fail_open only): masters of
	// a Redis Cluster by address, or the one Redis.
	DownShards int
	// Buffered is the number of entries waiting to be replayed: one per
	// call or refund, fewer after a failed replay put back aggregates.
	Buffered int
	// Degraded counts calls admitted without Redis.
	Degraded int64
	// Dropped counts calls and refunds dropped because the buffer was full.
	Dropped int64
	// Replayed counts calls and refunds written back to Redis.
	Replayed int64
	// DroppedEvents counts usage events lost because Redis could not take
	// them and the events kept waiting for it (BufferSize) were too many.
	DroppedEvents int64
	// EventsKept is the number of usage events waiting for Redis to take
	// them, oldest first.
	EventsKept int
	// EventsReplayed counts kept events written once Redis answered.
	EventsReplayed int64
	// Unsettled is the number of calls waiting to be settled by id: sent
	// to Redis without an answer and not served, or refunds that did not
	// reach it (settle.go).
	Unsettled int
	// Settled counts calls settled by id once Redis answered.
	Settled int64
	// UnsettledDropped counts calls dropped unsettled because the queue
	// (BufferSize) was full.
	UnsettledDropped int64
	// Resent counts counter writes sent again to a Redis Cluster master
	// that took over from one which may not have replicated them
	// (replication.go).
	Resent int64
	// JournalDropped counts counter writes dropped from a master's journal
	// past its bound before its replicas had them (replication.go).
	JournalDropped int64
}

// OutageMeter applies an outage policy to a [RedisMeter]. Create it with
// [NewOutageMeter] and stop it with Close; it is safe for concurrent use.
//
// Under fail_closed it passes every call through: a Redis failure is an
// error wrapping [ErrUnavailable], and the adapter answers 503 with
// Retry-After.
//
// Under fail_open, a call that fails with ErrUnavailable (and not because
// its own context ended) marks its shard down (shards.go: the one Redis,
// or on a Redis Cluster the master of the key's slot, so that the keys of
// the other masters stay metered) and is admitted with a Degraded
// Decision: no rate limit or quota is checked, and its cost is kept in a
// bounded local buffer (the oldest entries are dropped beyond BufferSize,
// counted in OutageStats.Dropped and logged). While its shard is down, a
// call does not wait for Redis at all. A background goroutine probes each
// down shard every RetryInterval (after asking for a fresh slot map) and,
// once it answers, replays that shard's buffer into the day, month and
// per-tool counters of each call's time (by this replica's clock),
// aggregated per key, tool and day, then sends its calls to Redis again.
// Rate-limit state (GCRA) is not replayed.
//
// Under both policies, usage events that Redis cannot take are kept
// (bounded by BufferSize) and written in order once it answers.
//
// Under both policies, a call whose admission was sent but not answered is
// settled by its id once Redis answers (settle.go): given back when it was
// not served, counted once when it was served Degraded. Refunds by id that
// fail are kept and sent again. So the counters end equal to the calls
// served, whatever the fault (docs/security.md H29); replays are idempotent
// too, each aggregate under an id of its own.
type OutageMeter struct {
	m      *RedisMeter
	policy Outage
	size   int
	retry  time.Duration
	log    *slog.Logger

	mu        sync.Mutex
	down      map[string]string // down shard → a key id of it, to probe with (shards.go)
	buf       []pending         // ring of at most size entries
	head      int               // index of the oldest entry
	n         int               // entries in buf
	unsettled []settleOp
	events    []Event // kept while Redis could not take them, oldest first
	stats     OutageStats
	// settling and replaying are the queued settles and buffered entries
	// a settleAll or flush has taken out to send and not yet sent or put
	// back: Stats counts them as Unsettled and Buffered still.
	settling, replaying int

	wake    chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
	watched chan struct{} // closed when watchReplication returns; nil without it
}

// pending is one buffered call (calls 1, cost ≥ 0), refund (calls -1,
// cost ≤ 0) or aggregate. One with a ref is replayed by that id and never
// aggregated: a call whose admission may have counted, or an aggregate
// already sent once.
type pending struct {
	keyID, tool string
	shard       string // the key's shard when it was buffered
	at          time.Time
	cost, calls int64
	entries     int64 // buffered calls and refunds aggregated into this one
	ref         callRef
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
		down:   map[string]string{},
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
	ctx, o.cancel = context.WithCancel(ctx)
	go o.run(ctx)
	if m.journal != nil {
		o.watched = make(chan struct{})
		go o.watchReplication(ctx)
	}
	return o
}

// watchReplication polls the Cluster masters' replication every
// replicationPoll (replication.go) and queues for settling the counter
// writes of a master another has taken over from, until ctx ends.
func (o *OutageMeter) watchReplication(ctx context.Context) {
	defer close(o.watched)
	t := time.NewTicker(replicationPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, replicationPoll)
		moved := o.m.checkReplication(pctx)
		cancel()
		for _, mv := range moved {
			o.mu.Lock()
			o.stats.Resent += int64(len(mv.ops))
			o.mu.Unlock()
			for _, op := range mv.ops {
				o.queueSettle(op)
			}
			o.log.Warn("metering: a Redis Cluster master was replaced; sending its last counter writes again to the new one, which may not have them",
				"old_master", mv.from, "new_master", mv.to, "writes", len(mv.ops))
		}
	}
}

// Policy returns the outage policy in force.
func (o *OutageMeter) Policy() Outage { return o.policy }

// AdmitCall is [RedisMeter.AdmitCall] under the outage policy.
func (o *OutageMeter) AdmitCall(ctx context.Context, c Call) (Decision, error) {
	if o.policy != OutageFailOpen {
		d, err := o.m.AdmitCall(ctx, c)
		if errors.Is(err, ErrUnavailable) {
			o.m.refreshTopology()
		}
		if op := unsettled(err); op != nil {
			o.queueSettle(*op) // answered 503: give it back if it counted
		}
		return d, err
	}
	if err := c.validate(); err != nil {
		return Decision{}, err
	}
	shard := o.m.shardOf(c.KeyID)
	var ref callRef
	if !o.isDown(shard) {
		d, err := o.m.admitOn(ctx, c, shard)
		op := unsettled(err)
		if !o.failsOpen(ctx, err, shard, c.KeyID) {
			if op != nil {
				o.queueSettle(*op) // not served (the client left)
			}
			return d, err
		}
		if op != nil {
			ref = op.ref // served Degraded: count it by id, once
		}
	}
	at := o.m.replicaNow().UTC()
	o.push(pending{keyID: c.KeyID, tool: c.Tool, shard: shard, at: at, cost: c.Cost, calls: 1, entries: 1, ref: ref}, true)
	return Decision{Allowed: true, Degraded: true, Plan: c.Plan.Name, Cost: c.Cost, At: at}, nil
}

// Refund is [RedisMeter.Refund] under the outage policy; under fail_open a
// refund that cannot reach Redis, or of a Degraded call, is buffered.
func (o *OutageMeter) Refund(ctx context.Context, c Call, d Decision) error {
	if d.Allowed && !d.Degraded && d.ref.id != "" {
		// By the call's record: idempotent, so one that fails is kept and
		// sent again, under either policy.
		err := o.m.Refund(ctx, c, d)
		if errors.Is(err, ErrUnavailable) {
			o.m.refreshTopology()
			o.queueSettle(undoOp(c, d))
			if o.policy == OutageFailOpen {
				o.failsOpen(ctx, err, o.m.shardOf(c.KeyID), c.KeyID)
			}
			return nil
		}
		return err
	}
	shard := o.m.shardOf(c.KeyID)
	if o.policy != OutageFailOpen || (!d.Degraded && !o.isDown(shard)) {
		err := o.m.Refund(ctx, c, d)
		if o.policy != OutageFailOpen || !o.failsOpen(ctx, err, shard, c.KeyID) {
			return err
		}
	}
	if !d.Allowed {
		return nil
	}
	o.push(pending{keyID: c.KeyID, tool: c.Tool, shard: shard, at: d.At, cost: -d.Cost, calls: -1, entries: 1}, false)
	return nil
}

// Report is [RedisMeter.Report]; it fails while Redis is down, whatever the
// policy, and does not include buffered counts.
func (o *OutageMeter) Report(ctx context.Context, keyID string, plan *Plan) (Report, error) {
	return o.m.Report(ctx, keyID, plan)
}

// RecordEvent is [RedisMeter.RecordEvent] under the outage policy: see
// RecordEvents.
func (o *OutageMeter) RecordEvent(ctx context.Context, e Event) error {
	return o.RecordEvents(ctx, []Event{e})
}

// RecordEvents is [RedisMeter.RecordEvents], under either policy: events
// that Redis cannot take now are kept, oldest first, and written once it
// answers (at most BufferSize; beyond it the oldest are dropped, counted
// in OutageStats.DroppedEvents and logged). While events are kept, new
// ones wait behind them, so the stream keeps their order.
func (o *OutageMeter) RecordEvents(ctx context.Context, events []Event) error {
	if len(events) == 0 {
		return nil
	}
	o.mu.Lock()
	waiting := len(o.events) > 0
	o.mu.Unlock()
	if !waiting {
		err := o.m.RecordEvents(ctx, events)
		if err == nil || !errors.Is(err, ErrUnavailable) || errors.Is(ctx.Err(), context.Canceled) {
			return err
		}
		o.m.refreshTopology()
	}
	o.keepEvents(events)
	return nil
}

// keepEvents adds events to those waiting for Redis, dropping the oldest
// beyond BufferSize.
func (o *OutageMeter) keepEvents(events []Event) {
	o.mu.Lock()
	o.events = append(o.events, events...)
	over := len(o.events) - o.size
	if over > 0 {
		o.events = append(o.events[:0:0], o.events[over:]...)
		o.stats.DroppedEvents += int64(over)
	}
	dropped := o.stats.DroppedEvents
	o.mu.Unlock()
	if over > 0 {
		o.log.Warn("metering: usage events kept for Redis past the buffer; dropping the oldest", "dropped_events", dropped, "buffer_size", o.size)
	}
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// flushEvents writes the kept events, 1,000 at a time; on a failure the
// rest stay kept.
func (o *OutageMeter) flushEvents(ctx context.Context) error {
	for {
		o.mu.Lock()
		batch := o.events[:min(len(o.events), 1000)]
		o.mu.Unlock()
		if len(batch) == 0 {
			return nil
		}
		if err := o.m.RecordEvents(ctx, batch); err != nil {
			return err
		}
		o.mu.Lock()
		o.events = o.events[len(batch):]
		o.stats.EventsReplayed += int64(len(batch))
		o.mu.Unlock()
	}
}

// Ping is [RedisMeter.Ping]: readiness reflects Redis whatever the policy.
func (o *OutageMeter) Ping(ctx context.Context) error { return o.m.Ping(ctx) }

// Stats returns the counters.
func (o *OutageMeter) Stats() OutageStats {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.stats
	s.Down, s.DownShards, s.EventsKept = len(o.down) > 0, len(o.down), len(o.events)
	s.Buffered, s.Unsettled = o.n+o.replaying, len(o.unsettled)+o.settling
	if o.m.journal != nil {
		s.JournalDropped = o.m.journal.droppedEntries()
	}
	return s
}

// Close stops the replay goroutine and makes a last attempt, bounded by
// ctx, to settle and replay what is kept. It returns an error when entries
// remain (they are lost).
func (o *OutageMeter) Close(ctx context.Context) error {
	o.cancel()
	<-o.done
	if o.watched != nil {
		<-o.watched
	}
	if err := o.settleAll(ctx); err != nil {
		return fmt.Errorf("metering: %d calls not settled: %w", o.Stats().Unsettled, err)
	}
	if o.Stats().Buffered > 0 {
		if err := o.Flush(ctx); err != nil {
			return fmt.Errorf("metering: %d buffered calls not replayed: %w", o.Stats().Buffered, err)
		}
	}
	if err := o.flushEvents(ctx); err != nil {
		return fmt.Errorf("metering: %d usage events not written: %w", o.Stats().EventsKept, err)
	}
	return nil
}

// queueSettle keeps op until Redis answers, dropping the oldest beyond
// BufferSize.
func (o *OutageMeter) queueSettle(op settleOp) {
	o.mu.Lock()
	if len(o.unsettled) >= o.size {
		o.unsettled = o.unsettled[1:]
		o.stats.UnsettledDropped++
	}
	o.unsettled = append(o.unsettled, op)
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// settleAll settles every queued call, oldest first. An op of a shard
// that is down waits; one that fails stays queued, and the first error is
// returned. Once ctx ends the rest stay queued.
func (o *OutageMeter) settleAll(ctx context.Context) error {
	o.mu.Lock()
	ops := o.unsettled
	o.unsettled = nil
	o.settling += len(ops)
	o.mu.Unlock()
	var keep []settleOp
	var first error
	for i, op := range ops {
		if ctx.Err() != nil {
			keep = append(keep, ops[i:]...)
			break
		}
		if o.isDown(o.m.shardOf(op.keyID)) {
			keep = append(keep, op)
			continue
		}
		if err := o.m.settle(ctx, op); err != nil {
			keep = append(keep, op)
			if first == nil {
				first = err
			}
			continue
		}
		o.mu.Lock()
		o.stats.Settled++
		o.settling--
		o.mu.Unlock()
	}
	o.mu.Lock()
	o.settling -= len(keep)
	if len(keep) > 0 {
		o.unsettled = append(keep, o.unsettled...)
	}
	o.mu.Unlock()
	if len(keep) > 0 {
		if first == nil {
			first = fmt.Errorf("%w: %d calls wait for their shard", ErrUnavailable, len(keep))
		}
	}
	return first
}

// failsOpen reports whether err is a store failure to fail open on, and
// if so marks Redis down.
//
// A call whose own context ran out of time while waiting for Redis counts
// as a store failure (a stalled Redis looks exactly like that); one whose
// context was cancelled (the client left) does not.
//
// Only shard, the shard of keyID (shards.go), is marked down: on a Redis
// Cluster the keys of the other masters stay metered.
func (o *OutageMeter) failsOpen(ctx context.Context, err error, shard, keyID string) bool {
	if err == nil || !errors.Is(err, ErrUnavailable) || errors.Is(ctx.Err(), context.Canceled) {
		return false
	}
	o.m.refreshTopology()
	o.mu.Lock()
	_, wasDown := o.down[shard]
	if !wasDown {
		o.down[shard] = keyID
	}
	o.mu.Unlock()
	if !wasDown {
		o.log.Warn("metering store down; failing open: calls admitted without limits and counted locally",
			"shard", shardName(shard), "error", err, "buffer_size", o.size)
	}
	return true
}

// shardName is a shard for the log: "redis" for the one Redis.
func shardName(shard string) string {
	if shard == "" {
		return "redis"
	}
	return shard
}

// isDown reports whether shard is down.
func (o *OutageMeter) isDown(shard string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, down := o.down[shard]
	return down
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

// take removes and returns the buffered entries for which keep is true
// (every one when keep is nil), oldest first; the others stay. The entries
// taken count as replaying (Stats: Buffered) until flush is done with
// them.
func (o *OutageMeter) take(keep func(pending) bool) []pending {
	o.mu.Lock()
	defer o.mu.Unlock()
	all := o.take0()
	if keep == nil {
		o.replaying += len(all)
		return all
	}
	var out, stay []pending
	for _, p := range all {
		if keep(p) {
			out = append(out, p)
		} else {
			stay = append(stay, p)
		}
	}
	copy(o.buf, stay)
	o.head, o.n = 0, len(stay)
	o.replaying += len(out)
	return out
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
func (o *OutageMeter) Flush(ctx context.Context) error { return o.flush(ctx, nil) }

// flush is Flush of the entries for which which is true (all when nil).
func (o *OutageMeter) flush(ctx context.Context, which func(pending) bool) error {
	ps := o.take(which)
	if len(ps) == 0 {
		return nil
	}
	defer func() {
		o.mu.Lock()
		o.replaying -= len(ps)
		o.mu.Unlock()
	}()
	// Entries with an id are replayed as they are; the others are summed
	// per key, tool and day, and each sum gets an id of its own, kept if it
	// has to be sent again, so that no replay counts twice.
	type aggKey struct{ keyID, tool, day string }
	var out []*pending
	agg := make(map[aggKey]*pending)
	minute := minuteOf(o.m.replicaNow())
	for i := range ps {
		p := &ps[i]
		if p.ref.id != "" {
			out = append(out, p)
			continue
		}
		k := aggKey{p.keyID, p.tool, dayPeriod(p.at)}
		a := agg[k]
		if a == nil {
			a = &pending{keyID: p.keyID, tool: p.tool, shard: p.shard, at: p.at, ref: callRef{id: nonce(), minutes: [3]int64{minute}}}
			agg[k] = a
			out = append(out, a)
		}
		a.cost += p.cost
		a.calls += p.calls
		a.entries += p.entries
	}
	var n int64
	for i, a := range out {
		op := settleOp{keyID: a.keyID, tool: a.tool, ref: a.ref, cost: a.cost, calls: a.calls, day: dayPeriod(a.at)}
		if err := o.m.settle(ctx, op); err != nil {
			rest := make([]pending, 0, len(out)-i)
			for _, a := range out[i:] {
				rest = append(rest, *a)
			}
			o.putBack(rest)
			o.mu.Lock()
			o.stats.Replayed += n
			o.mu.Unlock()
			return err
		}
		n += a.entries
	}
	o.mu.Lock()
	o.stats.Replayed += n
	o.mu.Unlock()
	return nil
}

// run probes the down shards, settles, replays and writes kept events
// once Redis answers.
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
			if s := o.Stats(); s.Down || s.EventsKept > 0 {
				continue // wait for the ticker: no probe per call or event
			}
		}
		if s := o.Stats(); s.Buffered == 0 && s.Unsettled == 0 && !s.Down && s.EventsKept == 0 {
			continue
		}
		o.recover(ctx)
	}
}

// recover probes each down shard (after asking for a fresh slot map: a
// replica may hold its slots now), replays a shard's buffer once it
// answers and marks it up when nothing of it is left; it then settles
// queued calls, replays what is buffered for shards that are up, and
// writes the kept events.
func (o *OutageMeter) recover(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, o.retry)
	defer cancel()
	o.mu.Lock()
	down := make(map[string]string, len(o.down))
	for shard, keyID := range o.down {
		down[shard] = keyID
	}
	o.mu.Unlock()
	if len(down) > 0 {
		o.m.refreshTopology()
	}
	for shard, keyID := range down {
		if o.m.pingShardOf(pctx, keyID) != nil {
			continue
		}
		for range 3 { // calls still degrade while replaying; catch up a few times
			if err := o.flush(pctx, func(p pending) bool { return p.shard == shard }); err != nil {
				break
			}
			o.mu.Lock()
			left := 0
			for i := range o.n {
				if o.buf[(o.head+i)%o.size].shard == shard {
					left++
				}
			}
			if left == 0 {
				delete(o.down, shard)
				s := o.stats
				o.mu.Unlock()
				o.log.Info("metering store answering again; buffered counts replayed",
					"shard", shardName(shard), "replayed", s.Replayed, "dropped", s.Dropped, "degraded", s.Degraded)
				break
			}
			o.mu.Unlock()
		}
	}
	_ = o.settleAll(pctx)
	o.mu.Lock()
	stillDown := make(map[string]bool, len(o.down))
	for shard := range o.down {
		stillDown[shard] = true
	}
	o.mu.Unlock()
	_ = o.flush(pctx, func(p pending) bool { return !stillDown[p.shard] }) // take holds o.mu: a copy of the set
	_ = o.flushEvents(pctx)
}
