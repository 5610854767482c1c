package metering

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Refunding many calls at once: the adapter's usage writer hands every
// refund queued since its last batch to Refunds, so a burst of failing calls
// costs Redis one pipelined round trip instead of one per call.

// RefundRequest is one call to refund: the call and the Decision that
// admitted it, as for Refund.
type RefundRequest struct {
	Call     Call
	Decision Decision
}

// Refunds is Refund for each of rs, in one pipelined round trip (no round
// trip at all when none needs one). errs[i] is what Refund would have
// returned for rs[i]; len(errs) == len(rs). Redis failures are wrapped with
// [ErrUnavailable].
func (m *RedisMeter) Refunds(ctx context.Context, rs []RefundRequest) []error {
	errs := make([]error, len(rs))
	type pendingRefund struct {
		i      int
		script *redis.Script
		keys   []string
		args   []any
		cmd    *redis.Cmd
	}
	var todo []pendingRefund
	deadline, err := "", error(nil)
	for i, r := range rs {
		if !r.Decision.Allowed || r.Decision.Degraded {
			continue
		}
		if !validKeyID(r.Call.KeyID) {
			errs[i] = fmt.Errorf("%w: %q", ErrInvalidKeyID, r.Call.KeyID)
			continue
		}
		if r.Decision.ref.id != "" { // by the call's record: exact, idempotent
			keys, args := settleArgs(undoOp(r.Call, r.Decision))
			todo = append(todo, pendingRefund{i: i, script: settleScript, keys: keys, args: args})
			continue
		}
		if deadline == "" && err == nil {
			deadline, err = m.scriptDeadline(ctx)
		}
		keys, args := m.adjustArgs(r.Call.KeyID, r.Call.Tool, r.Decision.At, -r.Decision.Cost, -1, deadline)
		todo = append(todo, pendingRefund{i: i, script: adjustScript, keys: keys, args: args})
	}
	if len(todo) == 0 {
		return errs
	}
	run := func(load bool) error {
		_, perr := m.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for j := range todo {
				t := &todo[j]
				if t.cmd != nil && !isNoScript(t.cmd.Err()) {
					continue // done in the first pass
				}
				if load {
					t.cmd = t.script.Eval(ctx, p, t.keys, t.args...)
				} else {
					t.cmd = t.script.EvalSha(ctx, p, t.keys, t.args...)
				}
			}
			return nil
		})
		return perr
	}
	if err == nil {
		err = run(false)
		if err != nil && anyNoScript(todo, func(t pendingRefund) *redis.Cmd { return t.cmd }) {
			// The script is not cached on (some) servers yet: send those
			// again with its source.
			err = run(true)
		}
	}
	for _, t := range todo {
		e := err
		if t.cmd != nil {
			e = t.cmd.Err()
		}
		if e != nil {
			errs[t.i] = fmt.Errorf("%w: refunding a call of key_id %s: %w", ErrUnavailable, rs[t.i].Call.KeyID, e)
		}
	}
	return errs
}

// isNoScript reports whether err is Redis's answer to EVALSHA of a script
// it does not have.
func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

func anyNoScript[T any](xs []T, cmd func(T) *redis.Cmd) bool {
	for _, x := range xs {
		if c := cmd(x); c != nil && isNoScript(c.Err()) {
			return true
		}
	}
	return false
}

// Refunds is [RedisMeter.Refunds] in memory.
func (m *MemoryMeter) Refunds(ctx context.Context, rs []RefundRequest) []error {
	errs := make([]error, len(rs))
	for i, r := range rs {
		errs[i] = m.Refund(ctx, r.Call, r.Decision)
	}
	return errs
}

// Refunds is [OutageMeter.Refund] for each of rs: those that go to Redis go
// in one [RedisMeter.Refunds] round trip, and under fail_open those that
// cannot reach it (or of Degraded calls) are buffered, as Refund does.
func (o *OutageMeter) Refunds(ctx context.Context, rs []RefundRequest) []error {
	errs := make([]error, len(rs))
	var toRedis []RefundRequest
	var at []int
	for i, r := range rs {
		if o.policy != OutageFailOpen || (!r.Decision.Degraded && !o.isDown(o.m.shardOf(r.Call.KeyID))) {
			toRedis = append(toRedis, r)
			at = append(at, i)
			continue
		}
		o.buffer(r)
	}
	for j, err := range o.m.Refunds(ctx, toRedis) {
		r := toRedis[j]
		if errors.Is(err, ErrUnavailable) {
			o.m.refreshTopology()
		}
		if r.Decision.ref.id != "" && errors.Is(err, ErrUnavailable) {
			// By the call's record: kept and sent again (settle.go).
			o.queueSettle(undoOp(r.Call, r.Decision))
			if o.policy == OutageFailOpen {
				o.failsOpen(ctx, err, o.m.shardOf(r.Call.KeyID), r.Call.KeyID)
			}
			continue
		}
		if o.policy == OutageFailOpen && o.failsOpen(ctx, err, o.m.shardOf(r.Call.KeyID), r.Call.KeyID) {
			o.buffer(r)
			continue
		}
		errs[at[j]] = err
	}
	return errs
}

// buffer keeps the refund of an allowed call for the outage buffer.
func (o *OutageMeter) buffer(r RefundRequest) {
	if !r.Decision.Allowed {
		return
	}
	o.push(pending{keyID: r.Call.KeyID, tool: r.Call.Tool, shard: o.m.shardOf(r.Call.KeyID), at: r.Decision.At, cost: -r.Decision.Cost, calls: -1, entries: 1}, false)
}
