package metering

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Admission batching. Concurrent calls' admissions go to Redis together:
// the admission scripts waiting for the same shard are sent in one
// pipeline (one write and one read on one connection, instead of one round
// trip each), which is most of what Redis spends on an admission besides
// the script itself. Nothing waits to fill a batch: the first admission
// is sent at once, and the ones that arrive while a pipeline is out go in
// the next. Each admission keeps its own outcome (its reply, or the error
// of its own command), its own id and script deadline, so everything that
// settle.go and deadline.go say of one admission holds in a batch: a
// caller that stops waiting (its context ends) gets an ambiguous error and
// settles its call by id, whether or not the script ran.
//
// Batches are per shard (shards.go): a Cluster master that stalls holds
// back only the admissions of the keys it holds.

const (
	// maxAdmitBatch is the most admissions in one pipeline.
	maxAdmitBatch = 64
	// admitPipelines is the most pipelines out at once per shard. Two let
	// the next batch be written while Redis runs the one before.
	admitPipelines = 2
)

// admission is one AdmitCall's script, waiting to be sent.
type admission struct {
	ctx   context.Context
	keys  []string
	args  []any
	reply chan admitReply // buffered: the sender never blocks on it
}

// admitReply is an admission's outcome and the round trip that carried it
// (sent, answered) for the clock offset.
type admitReply struct {
	r              []int64
	err            error
	sent, answered time.Time
}

// admitQueue holds one shard's admissions not yet sent.
type admitQueue struct {
	mu      sync.Mutex
	pending []*admission
	senders int // pipelines out, at most admitPipelines
}

// admitBatcher is the RedisMeter's queues, by shard. The zero value is
// ready to use.
type admitBatcher struct {
	mu     sync.Mutex
	queues map[string]*admitQueue
}

func (b *admitBatcher) queue(shard string) *admitQueue {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queues[shard]
	if q == nil {
		if b.queues == nil {
			b.queues = map[string]*admitQueue{}
		}
		q = &admitQueue{}
		b.queues[shard] = q
	}
	return q
}

// runAdmission runs planAdmitScript with keys and args in a pipeline
// shared with other calls' admissions to the same shard, and returns its
// reply. When ctx ends first, the error is ctx's: ambiguous, as the script
// may still run (its deadline bounds when).
func (m *RedisMeter) runAdmission(ctx context.Context, shard string, keys []string, args []any) admitReply {
	a := &admission{ctx: ctx, keys: keys, args: args, reply: make(chan admitReply, 1)}
	q := m.admits.queue(shard)
	q.mu.Lock()
	q.pending = append(q.pending, a)
	send := q.senders < admitPipelines
	if send {
		q.senders++
	}
	q.mu.Unlock()
	if send {
		batch := q.take()
		if len(batch) == 1 && batch[0] == a {
			// Alone: sent at once under the caller's own context, as if
			// there were no batching.
			rep := m.sendAlone(a)
			m.release(q)
			return rep
		}
		// A batch with other callers' admissions goes out from a goroutine
		// of its own: the caller waits only for its reply or for its
		// context to end, never for others' round trips.
		go func() {
			m.sendAdmissions(batch)
			m.drainAdmissions(q)
		}()
	}
	select {
	case rep := <-a.reply:
		return rep
	case <-ctx.Done():
		return admitReply{err: ctx.Err()}
	}
}

// take removes up to maxAdmitBatch admissions from the queue.
func (q *admitQueue) take() []*admission {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := min(len(q.pending), maxAdmitBatch)
	batch := q.pending[:n:n]
	q.pending = q.pending[n:]
	if len(q.pending) == 0 {
		q.pending = nil // let the backing array go
	}
	return batch
}

// sendAlone runs one admission by itself.
func (m *RedisMeter) sendAlone(a *admission) admitReply {
	sent := time.Now()
	r, err := planAdmitScript.Run(a.ctx, m.rdb, a.keys, a.args...).Int64Slice()
	return admitReply{r: r, err: err, sent: sent, answered: time.Now()}
}

// idle gives back a sender's place when q is empty, and reports whether
// it did.
func (q *admitQueue) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) > 0 {
		return false
	}
	q.senders--
	return true
}

// release gives back a sender's place once its admission is answered, or
// has the admissions that came meanwhile sent in the background.
func (m *RedisMeter) release(q *admitQueue) {
	if !q.idle() {
		go m.drainAdmissions(q)
	}
}

// drainAdmissions sends q's batches until it is empty, then gives back
// its sender's place.
func (m *RedisMeter) drainAdmissions(q *admitQueue) {
	for !q.idle() {
		m.sendAdmissions(q.take())
	}
}

// sendAdmissions sends batch in one pipeline and hands each admission its
// reply. An admission whose caller has stopped waiting is not sent. The
// pipeline's context ends at the latest of its admissions' deadlines, and
// no later than the read timeout from now (a Cluster client would wait on
// past its read timeout).
func (m *RedisMeter) sendAdmissions(batch []*admission) {
	live := batch[:0:0]
	for _, a := range batch {
		if err := a.ctx.Err(); err != nil {
			a.reply <- admitReply{err: err}
			continue
		}
		live = append(live, a)
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := m.batchContext(live)
	defer cancel()
	cmds := make([]*redis.Cmd, len(live))
	sent := time.Now()
	_, _ = m.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, a := range live {
			cmds[i] = p.EvalSha(ctx, planAdmitScript.Hash(), a.keys, a.args...)
		}
		return nil
	})
	answered := time.Now()
	for i, a := range live {
		r, err := cmds[i].Int64Slice()
		if redis.HasErrorPrefix(err, "NOSCRIPT") {
			// Redis does not have the script (restarted, flushed): this one
			// admission again by itself (EVALSHA, then EVAL, which loads the
			// script for the next batch).
			a.reply <- m.sendAlone(a)
			continue
		}
		a.reply <- admitReply{r: r, err: err, sent: sent, answered: answered}
	}
}

// batchContext is the context of one pipeline of admissions.
func (m *RedisMeter) batchContext(batch []*admission) (context.Context, context.CancelFunc) {
	var last time.Time
	for _, a := range batch {
		d, ok := a.ctx.Deadline()
		if !ok {
			last = time.Time{}
			break
		}
		if d.After(last) {
			last = d
		}
	}
	if rt := m.readTimeout; rt > 0 && (last.IsZero() || time.Until(last) > rt) {
		last = time.Now().Add(rt)
	}
	base := context.WithoutCancel(batch[0].ctx)
	if last.IsZero() {
		return context.WithCancel(base)
	}
	return context.WithDeadline(base, last)
}
