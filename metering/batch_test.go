package metering

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// gatedRedis holds every lone EVALSHA (an admission sent by itself) until
// release is closed, and records the size of every pipeline. With
// flushScripts set, it empties Redis's script cache before the first
// pipeline, so that its EVALSHAs answer NOSCRIPT.
type gatedRedis struct {
	rediser
	release      chan struct{}
	flushScripts bool

	mu        sync.Mutex
	alone     int
	evals     int
	pipelines []int
}

func (g *gatedRedis) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	g.mu.Lock()
	g.evals++
	g.mu.Unlock()
	return g.rediser.Eval(ctx, script, keys, args...)
}

func (g *gatedRedis) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	g.mu.Lock()
	g.alone++
	g.mu.Unlock()
	<-g.release
	return g.rediser.EvalSha(ctx, sha1, keys, args...)
}

func (g *gatedRedis) Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error) {
	g.mu.Lock()
	flush := g.flushScripts
	g.flushScripts = false
	g.mu.Unlock()
	return g.rediser.Pipelined(ctx, func(p redis.Pipeliner) error {
		if flush { // first in the same pipeline: no EVAL from elsewhere comes between
			p.ScriptFlush(ctx)
		}
		before := p.Len()
		err := fn(p)
		g.mu.Lock()
		g.pipelines = append(g.pipelines, p.Len()-before)
		g.mu.Unlock()
		return err
	})
}

// TestAdmissionsBatched holds the first two admissions (each sent alone,
// as admitPipelines allows two senders) in flight while ten more arrive,
// one of whose callers then stops waiting. When the two are answered, the
// nine whose callers still wait go to Redis in one pipeline; the tenth is
// never sent and its caller gets an ambiguous (unsettled) error. Every
// other call is admitted with its own decision, and the day counter is
// exactly the eleven calls' cost. With flushScripts, Redis has lost the
// script when the pipeline arrives: each admission is run again by itself.
func TestAdmissionsBatched(t *testing.T) {
	for _, flush := range []bool{false, true} {
		name := map[bool]string{false: "script-cached", true: "noscript"}[flush]
		t.Run(name, func(t *testing.T) {
			c := testRedis(t)
			id := newKeyID(t, c)
			g := &gatedRedis{rediser: c, release: make(chan struct{}), flushScripts: flush}
			m := NewRedis(c, Options{})
			m.rdb = g
			// The clock offset is measured before the gate matters.
			if _, err := m.scriptDeadline(context.Background()); err != nil {
				t.Fatal(err)
			}
			p := mustParsePlans(t, "default_plan: p\nplans:\n  p:\n    quotas: {day: 1000, month: 100000}\n    costs: {heavy: 3}\n").Plan("p")
			call := Call{KeyID: id, Plan: p, Tool: "heavy", Cost: 3}

			type result struct {
				d   Decision
				err error
			}
			results := make(chan result, 12)
			admit := func(ctx context.Context) {
				d, err := m.AdmitCall(ctx, call)
				results <- result{d, err}
			}
			for n := 1; n <= 2; n++ {
				go admit(context.Background())
				waitFor(t, "an admission sent alone", func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.alone == n })
			}

			q := m.admits.queue("")
			queued := func(n int) func() bool {
				return func() bool { q.mu.Lock(); defer q.mu.Unlock(); return len(q.pending) == n }
			}
			ctx, cancel := context.WithCancel(context.Background())
			go admit(ctx)
			waitFor(t, "one admission queued", queued(1))
			for range 9 {
				go admit(context.Background())
			}
			waitFor(t, "ten admissions queued", queued(10))
			cancel()
			gone := <-results
			if !errors.Is(gone.err, ErrUnavailable) || !errors.Is(gone.err, context.Canceled) || unsettled(gone.err) == nil || gone.d.Allowed {
				t.Fatalf("the admission whose caller stopped waiting: %+v, %v; want not allowed, an unsettled ErrUnavailable from context.Canceled", gone.d, gone.err)
			}
			close(g.release)

			for range 11 {
				r := <-results
				if r.err != nil || !r.d.Allowed || r.d.Cost != 3 || r.d.ref.id == "" {
					t.Fatalf("AdmitCall = %+v, %v; want allowed at cost 3 with a call record", r.d, r.err)
				}
			}
			g.mu.Lock()
			pipelines, alone, evals := slices.Clone(g.pipelines), g.alone, g.evals
			g.mu.Unlock()
			if !slices.Equal(pipelines, []int{9}) {
				t.Errorf("pipelines of %v admissions, want one of 9", pipelines)
			}
			// After a NOSCRIPT each of the nine is run again by itself
			// (EVALSHA, and EVAL while Redis still lacks the script, which
			// loads it): eleven lone EVALSHAs and at least one EVAL.
			if wantAlone := map[bool]int{false: 2, true: 11}[flush]; alone != wantAlone || flush && evals == 0 {
				t.Errorf("%d lone EVALSHAs and %d EVALs, want %d and (after NOSCRIPT) at least one EVAL", alone, evals, wantAlone)
			}
			rep := mustReport(t, m, id, p)
			if got := rep.Periods[0].Used; got != 33 {
				t.Errorf("day counter %d, want 33 (11 calls of cost 3)", got)
			}
			waitFor(t, "both senders' places given back", func() bool { q.mu.Lock(); defer q.mu.Unlock(); return q.senders == 0 && len(q.pending) == 0 })
		})
	}
}
