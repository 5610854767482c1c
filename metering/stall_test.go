package metering

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"
)

// TestIssue8RedisStallSettles stops Redis with SIGSTOP (it hangs rather
// than dies) while calls arrive, each waiting at most 300 ms as the adapter's
// meter timeout makes them. When Redis resumes it runs the scripts that
// were queued on its sockets; their deadline has passed, so they count
// nothing. The counters then equal the calls served: under fail_closed the
// one call before the stall (every stalled call was answered 503), under
// fail_open that call plus the five admitted Degraded and replayed once.
func TestIssue8RedisStallSettles(t *testing.T) {
	for _, tt := range []struct {
		policy Outage
		served int64
	}{{OutageFailClosed, 1}, {OutageFailOpen, 6}} {
		t.Run(string(tt.policy), func(t *testing.T) {
			proc := startRedisProc(t)
			rm := NewRedis(proc.client(), Options{})
			o := NewOutageMeter(context.Background(), rm, OutageOptions{Policy: tt.policy, RetryInterval: 50 * time.Millisecond})
			t.Cleanup(func() { _ = o.Close(context.Background()) })
			p := mustParsePlans(t, outagePlan).Plan("p")
			c := Call{KeyID: "stall", Plan: p, Tool: "two", Cost: 2}
			admit := func() (Decision, error) {
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				defer cancel()
				return o.AdmitCall(ctx, c)
			}
			if d, err := admit(); err != nil || !d.Allowed || d.Degraded {
				t.Fatalf("before the stall: %+v, %v", d, err)
			}
			if err := proc.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			resumed := false
			resume := func() {
				if !resumed {
					resumed = true
					_ = proc.cmd.Process.Signal(syscall.SIGCONT)
				}
			}
			t.Cleanup(resume)
			for i := range 5 {
				d, err := admit()
				switch tt.policy {
				case OutageFailClosed:
					if !errors.Is(err, ErrUnavailable) || d.Allowed {
						t.Fatalf("stalled call %d under fail_closed: %+v, %v; want ErrUnavailable", i, d, err)
					}
				case OutageFailOpen:
					if err != nil || !d.Allowed || !d.Degraded {
						t.Fatalf("stalled call %d under fail_open: %+v, %v; want admitted Degraded", i, d, err)
					}
				}
			}
			resume()
			ctx := context.Background()
			waitFor(t, "Redis to answer and the buffer to replay", func() bool {
				s := o.Stats()
				return o.Ping(ctx) == nil && !s.Down && s.Buffered == 0
			})
			// The stalled scripts reach Redis when it resumes, in no order
			// relative to this client's commands: read the counters every
			// 20 ms for 200 ms, and check them every time.
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for i := range 10 {
				r := mustReport(t, rm, "stall", p)
				if r.Periods[0].Used != 2*tt.served || r.Periods[1].Tools["two"] != (ToolUsage{tt.served, 2 * tt.served}) {
					t.Fatalf("read %d: usage %+v, want %d calls and %d units (the calls served)", i, r.Periods, tt.served, 2*tt.served)
				}
				<-tick.C
			}
			t.Cleanup(func() { deleteKeys(t, proc.client(), "stall") })
		})
	}
}

// TestScriptDeadlineWithinReadTimeout: a call whose context allows 3 s
// meets a Redis stalled for 1.5 s (SIGSTOP). The client gives up at its
// 1 s read timeout and the call is refused; when Redis resumes it runs the
// queued script, whose deadline was the read timeout, not the context's,
// so nothing is counted, with no settling needed (RedisMeter alone, no
// OutageMeter).
func TestScriptDeadlineWithinReadTimeout(t *testing.T) {
	proc := startRedisProc(t)
	rm := NewRedis(proc.client(), Options{})
	p := mustParsePlans(t, outagePlan).Plan("p")
	c := Call{KeyID: "paused", Plan: p, Tool: "two", Cost: 2}
	ctx := context.Background()
	if d, err := rm.AdmitCall(ctx, c); err != nil || !d.Allowed {
		t.Fatalf("before the pause: %+v, %v", d, err)
	}
	if err := proc.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(1500*time.Millisecond, func() { _ = proc.cmd.Process.Signal(syscall.SIGCONT) }) // the stall lasts 1.5 s
	t.Cleanup(func() { _ = proc.cmd.Process.Signal(syscall.SIGCONT) })
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	start := time.Now()
	d, err := rm.AdmitCall(cctx, c)
	if !errors.Is(err, ErrUnavailable) || d.Allowed {
		t.Fatalf("during the pause: %+v, %v; want ErrUnavailable", d, err)
	}
	if took := time.Since(start); took > 1400*time.Millisecond {
		t.Errorf("the refusal took %v, want about the 1 s read timeout", took)
	}
	// Redis resumes and runs the script waiting on its socket; that it
	// counted nothing cannot be polled for, so wait past the resume.
	time.Sleep(1500 * time.Millisecond)
	if r := mustReport(t, rm, "paused", p); r.Periods[0].Used != 2 || r.Periods[1].Tools["two"] != (ToolUsage{1, 2}) {
		t.Errorf("usage %+v, want only the call before the pause (1 call, 2 units)", r.Periods)
	}
	t.Cleanup(func() { deleteKeys(t, proc.client(), "paused") })
}
